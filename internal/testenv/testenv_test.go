package testenv

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// fakeT records what Missing does instead of stopping a real test.
type fakeT struct {
	testing.TB
	skipped, failed string
}

func (f *fakeT) Helper()                        {}
func (f *fakeT) Skipf(format string, a ...any)  { f.skipped = sprintf(format, a...) }
func (f *fakeT) Fatalf(format string, a ...any) { f.failed = sprintf(format, a...) }
func sprintf(format string, a ...any) string    { return strings.TrimSpace(fmt.Sprintf(format, a...)) }

// TestMissingSkipsOrFails: a tool that is nowhere skips the test naming
// the tool and its package, and fails it under MNEMOFS_REQUIRE_FUSE=1.
func TestMissingSkipsOrFails(t *testing.T) {
	const name = "mnemofs-no-such-tool"
	if _, err := exec.LookPath(name); err == nil {
		t.Fatalf("%s exists", name)
	}
	t.Setenv("MNEMOFS_REQUIRE_FUSE", "")
	f := &fakeT{}
	Tool(f, name)
	if !strings.Contains(f.skipped, name) || !strings.Contains(f.skipped, "apt-get install "+name) || f.failed != "" {
		t.Fatalf("skip %q, fail %q", f.skipped, f.failed)
	}
	t.Setenv("MNEMOFS_REQUIRE_FUSE", "1")
	f = &fakeT{}
	Tools(f, "sh", name, "getfattr-"+name)
	if !strings.Contains(f.failed, "apt-get install "+name+" getfattr-"+name+")") {
		t.Fatalf("fail %q", f.failed)
	}
	if f.skipped != "" || !strings.Contains(f.failed, name) || !strings.Contains(f.failed, "MNEMOFS_REQUIRE_FUSE=1") || strings.Contains(f.failed, "sh,") {
		t.Fatalf("skip %q, fail %q", f.skipped, f.failed)
	}
}
