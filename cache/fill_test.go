package cache

import "testing"

func TestFillKeepsNoStaleValue(t *testing.T) {
	f := NewFill[int, string](4)
	if _, ok, _ := f.Get(1); ok {
		t.Fatal("empty cache hit")
	}
	_, _, e := f.Get(1)
	f.Fill(1, "v1", e)
	if v, ok, _ := f.Get(1); !ok || v != "v1" {
		t.Fatalf("fill not kept: %q %v", v, ok)
	}
	// A reader loads v1, a writer stores v2 and forgets, the reader fills:
	// v1 must not come back.
	f.Forget(1)
	_, _, e = f.Get(1)
	f.Set(1, "v2")
	f.Fill(1, "v1", e)
	if v, _, _ := f.Get(1); v != "v2" {
		t.Fatalf("stale fill won: %q", v)
	}
	f.Forget(1)
	_, _, e = f.Get(1)
	f.Forget(2)
	f.Fill(1, "old", e)
	if _, ok, _ := f.Get(1); ok {
		t.Fatal("fill after a forget was kept")
	}
}
