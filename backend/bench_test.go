package backend

import (
	"fmt"
	"testing"
)

func BenchmarkUpdateSmall(b *testing.B) {
	kv, err := OpenBadger(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer kv.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := kv.Update(func(t Txn) error {
			t.Set([]byte(fmt.Sprintf("i%d", i)), make([]byte, 100))
			return t.Set([]byte(fmt.Sprintf("d%d", i)), make([]byte, 12))
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetSmall(b *testing.B) {
	kv, err := OpenBadger(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer kv.Close()
	kv.Update(func(t Txn) error { return t.Set([]byte("k"), make([]byte, 1024)) })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		kv.View(func(t Txn) error { _, err := t.Get([]byte("k")); return err })
	}
}

func BenchmarkBatchFlushSmall(b *testing.B) {
	kv, err := OpenBadger(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer kv.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt := kv.NewBatch()
		bt.Delete([]byte(fmt.Sprintf("i%d", i)))
		if err := bt.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}
