package views

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// BenchmarkWriteRedaction is write throughput (create, write 1 KiB,
// close, and the indexing of it, on an on-disk store) with no redaction
// rules, with every detector in index mode, and in store mode. One memory
// in ten holds an address, a key and a phone number. The three run in
// turn, three rounds (off, off#01, off#02, ...), so that the machine's
// load drifts over all of them alike.
//
//	go test -run XXX -bench WriteRedaction -benchtime 3000x ./views
func BenchmarkWriteRedaction(b *testing.B) {
	for round := 0; round < 3; round++ {
		for _, mode := range []string{"off", "index", "store"} {
			b.Run(mode, func(b *testing.B) { benchWriteRedaction(b, mode) })
		}
	}
}

func benchWriteRedaction(b *testing.B, mode string) {
	{
		{
			dir := b.TempDir()
			kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
			if err != nil {
				b.Fatal(err)
			}
			e := NewEngine(nil)
			st, err := store.Open(kv, store.Options{OnChange: e.Handle, BlobDir: filepath.Join(dir, "blobs"), ScratchAge: -1})
			if err != nil {
				b.Fatal(err)
			}
			e.Start(st)
			defer func() { e.Stop(); st.Close(); kv.Close() }()
			if mode != "off" {
				var pol strings.Builder
				pol.WriteString("redact:\n")
				for _, d := range []string{"email", "phone", "api_key", "card", "iban"} {
					pol.WriteString("  - {detector: " + d + ", mode: " + mode + "}\n")
				}
				if err := st.SetPolicy([]byte(pol.String())); err != nil {
					b.Fatal(err)
				}
			}
			sem, err := st.Lookup(store.RootIno, "semantic")
			if err != nil {
				sem, err = st.Mkdir(store.RootIno, "semantic", 0o755, store.Owner{})
			}
			if err != nil {
				b.Fatal(err)
			}
			words := strings.Repeat("the agent noted that the user prefers short answers about travel plans and budgets ", 13)[:1024]
			secret := "mail bob@example.com key AKIAQWERTYUIOPASDFGH call +41 44 668 18 00 "
			e.Ready()
			b.SetBytes(1024)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				text := words
				if i%10 == 0 {
					text = secret + words[len(secret):]
				}
				writeFile(b, st, sem.Ino, fmt.Sprintf("m%d.md", i), text)
			}
			e.Ready()
			// CPU time of the process (writer and indexer), less noisy on a
			// shared machine than the wall clock.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		}
	}
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
