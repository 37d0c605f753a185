package fusefs

import (
	"fmt"
	"os"
	"testing"
)

// Benchmarks of common operations on a real mount (the full comparison
// with go-fuse's loopback and the disk is scripts/bench-fs.sh).

func BenchmarkCreateWriteClose(b *testing.B) {
	tf := testMount(b)
	data := make([]byte, 1024)
	must(b, os.Mkdir(tf.path("working/b"), 0o755))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		must(b, os.WriteFile(tf.path(fmt.Sprintf("working/b/f%d", i)), data, 0o644))
	}
}

func BenchmarkAppendLine(b *testing.B) {
	tf := testMount(b)
	p := tf.path("working/log.jsonl")
	must(b, os.WriteFile(p, nil, 0o644))
	line := []byte(`{"turn": 1, "text": "a line of about eighty bytes of text, as an agent appends"}` + "\n")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		must(b, err)
		_, err = f.Write(line)
		must(b, err)
		must(b, f.Close())
	}
}

func BenchmarkOpenRead(b *testing.B) {
	tf := testMount(b)
	p := tf.path("working/r")
	must(b, os.WriteFile(p, make([]byte, 1024), 0o644))
	buf := make([]byte, 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(p)
		must(b, err)
		_, err = f.Read(buf)
		must(b, err)
		must(b, f.Close())
	}
}

func BenchmarkSeqWrite64M(b *testing.B) {
	tf := testMount(b)
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Create(tf.path(fmt.Sprintf("working/big%d", i)))
		must(b, err)
		for k := 0; k < 64; k++ {
			_, err = f.Write(buf)
			must(b, err)
		}
		must(b, f.Sync())
		must(b, f.Close())
	}
}
