package views

import (
	"reflect"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

func TestMerge(t *testing.T) {
	ch := func(k store.ChangeKind, ino, from uint64) store.Change {
		return store.Change{Kind: k, Ino: ino, From: from}
	}
	got := merge([]store.Change{
		ch(store.Changed, 1, 10), ch(store.Changed, 2, 0), ch(store.Changed, 1, 20),
		ch(store.Moved, 3, 0), ch(store.Changed, 3, 5), ch(store.Removed, 2, 0),
	})
	want := []store.Change{ch(store.Changed, 1, 10), ch(store.Changed, 3, 0), ch(store.Removed, 2, 0)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merge = %+v, want %+v", got, want)
	}
}
