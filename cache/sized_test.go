package cache

import (
	"fmt"
	"sync"
	"testing"
)

func TestSizedEvictsByBytes(t *testing.T) {
	c := NewSized[int, []byte](10 * (1000 + EntryOverhead))
	for k := 0; k < 10; k++ {
		if !c.Add(k, make([]byte, 1000), 1000) {
			t.Fatalf("entry %d not kept", k)
		}
	}
	if s := c.Stats(); s.Entries != 10 || s.Bytes != 10*(1000+EntryOverhead) || s.Evictions != 0 {
		t.Fatalf("after 10 adds: %+v", s)
	}
	c.Get(0) // 0 is now the most recent: 1 goes first
	c.Add(10, make([]byte, 2500), 2500)
	for _, k := range []int{1, 2, 3} {
		if _, ok := c.Get(k); ok {
			t.Errorf("entry %d kept past the bound", k)
		}
	}
	for _, k := range []int{0, 4, 10} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("entry %d evicted", k)
		}
	}
	s := c.Stats()
	if s.Bytes > s.MaxBytes || s.Evictions != 3 || s.Entries != 8 {
		t.Fatalf("after the large add: %+v", s)
	}
	// Replacing a value charges the new size, not both.
	c.Add(10, nil, 0)
	if got := c.Stats().Bytes; got != 7*(1000+EntryOverhead)+EntryOverhead {
		t.Fatalf("bytes after replacing: %d", got)
	}
	// Larger than the whole bound: not kept, and the old value goes.
	if c.Add(4, make([]byte, 20000), 20000) {
		t.Fatal("an entry larger than the bound was kept")
	}
	if _, ok := c.Get(4); ok {
		t.Fatal("the value replaced by a too-large one is still there")
	}
	c.Remove(0)
	c.Purge()
	if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 {
		t.Fatalf("after purge: %+v", s)
	}
}

func TestSizedCountsAndValidates(t *testing.T) {
	c := NewSized[string, string](1 << 20)
	c.Get("a")
	c.Add("a", "v1", 2)
	c.Get("a")
	if v, ok := c.Lookup("a", func(v string) bool { return v == "v2" }); ok {
		t.Fatalf("an entry the check rejects was returned: %q", v)
	}
	if _, ok := c.Get("a"); ok {
		t.Fatal("a rejected entry was kept")
	}
	s := c.Stats()
	if s.Hits != 1 || s.Misses != 3 || s.HitRate != 0.25 {
		t.Fatalf("counters: %+v", s)
	}
}

func TestSizedDisabled(t *testing.T) {
	c := NewSized[int, int](0)
	if c != nil {
		t.Fatal("a zero bound should give a disabled (nil) cache")
	}
	if c.Add(1, 1, 1) {
		t.Fatal("a disabled cache kept a value")
	}
	if _, ok := c.Get(1); ok {
		t.Fatal("a disabled cache hit")
	}
	c.Remove(1)
	c.Purge()
	if s := c.Stats(); s != (Stats{}) {
		t.Fatalf("stats of a disabled cache: %+v", s)
	}
}

func TestSizedConcurrent(t *testing.T) {
	c := NewSized[int, []byte](64 << 10)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := (i * 7) % 300
				if v, ok := c.Get(k); ok && len(v) != 100+k {
					panic(fmt.Sprintf("entry %d has %d bytes", k, len(v)))
				}
				c.Add(k, make([]byte, 100+k), 100+k)
			}
		}(g)
	}
	wg.Wait()
	if s := c.Stats(); s.Bytes > s.MaxBytes || s.Bytes <= 0 {
		t.Fatalf("bound not kept: %+v", s)
	}
}

func TestSplit(t *testing.T) {
	if c, q := Split(64 << 20); c != 56<<20 || q != 8<<20 {
		t.Fatalf("Split(64 MiB) = %d, %d", c, q)
	}
	if c, q := Split(0); c != 0 || q != 0 {
		t.Fatalf("Split(0) = %d, %d", c, q)
	}
}

func TestSizedAdmitsOnSecondMiss(t *testing.T) {
	c := NewSizedAdmit[int, string](1 << 20)
	if s := c.Stats(); s.MaxBytes != 1<<20 {
		t.Fatalf("bound %d, want the configured one", s.MaxBytes)
	}
	if c.Probe(1, true) {
		t.Fatal("a first miss was admitted")
	}
	if !c.Probe(1, true) {
		t.Fatal("a second miss was not admitted")
	}
	if _, ok := c.Get(1); ok {
		t.Fatal("hit before any add")
	}
	c.Add(1, "v", 1)
	if !c.Probe(1, true) {
		t.Fatal("a cached key was not probed through")
	}
	if v, ok := c.Get(1); !ok || v != "v" {
		t.Fatal("the admitted value is missing")
	}
	// Dropped as invalid: it was in use, so the next miss fills.
	if _, ok := c.Lookup(1, func(string) bool { return false }); ok {
		t.Fatal("invalid entry returned")
	}
	if !c.Probe(1, true) {
		t.Fatal("a key dropped as invalid must be admitted at once")
	}
	// Removed (the file is gone): forgotten entirely.
	c.Probe(2, true)
	c.Remove(2)
	if c.Probe(2, true) {
		t.Fatal("a removed key was still remembered")
	}
	// Reads that are not new accesses neither admit nor are remembered.
	first, second, third := c.Probe(3, false), c.Probe(3, false), c.Probe(3, true)
	if first || second || third {
		t.Fatal("a later read of one access admitted it")
	}
	// Misses: the first Probe(1), Get(1) before the add, the invalid
	// Lookup, both Probe(2), the three Probe(3).
	if s := c.Stats(); s.Hits != 1 || s.Misses != 8 {
		t.Fatalf("counters %+v", s)
	}
	if (*Sized[int, int])(nil).Probe(1, true) {
		t.Fatal("a disabled cache admitted")
	}
}
