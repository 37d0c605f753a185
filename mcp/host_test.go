package mcp

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

func hostStore(t *testing.T, user string) *store.Store {
	t.Helper()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(kv, store.Options{User: user})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); kv.Close() })
	return st
}

// TestHostCallsAsTheirUser: a host on a store for every user runs each
// call as its user sees the store (and records it as that user's); a
// host on a store for one user serves that user alone.
func TestHostCallsAsTheirUser(t *testing.T) {
	h := NewHost(hostStore(t, ""), nil, Options{})
	do := func(h *Host, user, args string) Result {
		t.Helper()
		r, err := h.Do(context.Background(), Call{Tool: "memory", Args: []byte(args), User: user, Via: "http"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for user, text := range map[string]string{"alice": "alice's note", "bob": "bob's note"} {
		if r := do(h, user, `{"command":"create","path":"/memories/semantic/`+user+`.md","file_text":"`+text+`\n"}`); r.IsError {
			t.Fatalf("%s's create: %s", user, r.Text)
		}
	}
	if r := do(h, "alice", `{"command":"view","path":"/memories/semantic"}`); !strings.Contains(r.Text, "alice.md") || strings.Contains(r.Text, "bob.md") {
		t.Errorf("alice's view of semantic/:\n%s", r.Text)
	}
	if r := do(h, "", `{"command":"view","path":"/memories/semantic"}`); !strings.Contains(r.Text, "alice.md") || !strings.Contains(r.Text, "bob.md") {
		t.Errorf("the view of semantic/ for every user:\n%s", r.Text)
	}
	if r := do(h, "bob", `{"command":"view","path":"/memories/semantic/alice.md"}`); !r.IsError || !strings.Contains(r.Text, "does not exist") {
		t.Errorf("bob's view of alice.md: %+v", r)
	}
	if r, _ := h.Do(context.Background(), Call{Tool: "memory", Args: []byte(`{"command":"create","path":"/memories/x.md","file_text":"x"}`), User: "carol", ReadOnly: true, ReadOnlyWhy: "the token carol is read-only"}); !r.IsError || !strings.Contains(r.Text, "the token carol is read-only: create changes nothing") {
		t.Errorf("a read-only call's create: %+v", r)
	}

	one := NewHost(hostStore(t, "alice"), nil, Options{})
	if r := do(one, "alice", `{"command":"view","path":"/memories"}`); r.IsError {
		t.Errorf("alice on a store held for her: %s", r.Text)
	}
	for _, user := range []string{"bob", ""} {
		if r := do(one, user, `{"command":"view","path":"/memories"}`); !r.IsError || !strings.Contains(r.Text, "held for user alice alone") {
			t.Errorf("%q on a store held for alice: %+v", user, r)
		}
	}
}

// TestHostActivity: what servers report is summed per user (the peak is
// the most of one server), a user is shown only their own, and what a
// server that has gone reported is dropped.
func TestHostActivity(t *testing.T) {
	h := NewHost(hostStore(t, ""), nil, Options{})
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	h.Report(os.Getpid(), map[string]Served{"alice": {Sessions: 2, Calls: 10, Peak: 3}, "bob": {Sessions: 1, Refused: 4}})
	h.Report(1, map[string]Served{"alice": {Sessions: 1, Calls: 5, Peak: 2, Waited: 1}}) // init: alive
	h.Report(gone.Process.Pid, map[string]Served{"alice": {Sessions: 7}})
	all := h.Activity("")
	if len(all) != 2 || all[0] != (Activity{User: "alice", Sessions: 3, Calls: 15, Waited: 1, Peak: 3}) || all[1] != (Activity{User: "bob", Sessions: 1, Refused: 4}) {
		t.Errorf("activity of every user: %+v", all)
	}
	if a := h.Activity("bob"); len(a) != 1 || a[0].User != "bob" {
		t.Errorf("bob's activity: %+v", a)
	}
	h.Report(os.Getpid(), nil)
	if a := h.Activity("bob"); len(a) != 0 {
		t.Errorf("bob's activity after his server reported none: %+v", a)
	}
}
