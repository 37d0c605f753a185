package store

import (
	"fmt"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// BenchmarkCreateWriteCommit is the store's share of create+write+close.
func BenchmarkCreateWriteCommit(b *testing.B) {
	kv, err := backend.OpenBadger(b.TempDir(), backend.Options{})
	must(b, err)
	s, err := Open(kv, Options{})
	must(b, err)
	defer kv.Close()
	defer s.Close()
	data := make([]byte, 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeFile(b, s, RootIno, fmt.Sprintf("f%d", i), data)
	}
}
