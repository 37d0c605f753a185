package views

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestNoImportOfConsumers: views names what it needs of the store and is
// given the files of meta/ that other packages write, so it depends on
// none of the packages that use it or sit above it.
func TestNoImportOfConsumers(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, above := range []string{"lifecycle", "report", "audit", "fusefs", "mcp", "control"} {
			if dep == "github.com/mnemofs/mnemofs/"+above {
				t.Errorf("views imports %s", dep)
			}
		}
	}
}

// TestMetaSources: meta/maintenance.log, mcp.log and report.html are
// made by what the mount sets, for the reader asking; an engine given
// none says so instead of making an empty file.
func TestMetaSources(t *testing.T) {
	e, _ := engineStore(t)
	for _, name := range []string{"maintenance.log", "mcp.log", "report.html"} {
		if _, err := MetaFiles[name](e, nil); !errors.Is(err, errNoSource) {
			t.Errorf("%s without a source: %v, want errNoSource", name, err)
		}
	}
	var asked []string
	made := func(name string) MetaFunc {
		return func(may May) ([]byte, error) {
			if may == nil || !may(7) || may(8) {
				t.Errorf("%s was not given the reader's filter", name)
			}
			asked = append(asked, name)
			return []byte(name + " text"), nil
		}
	}
	e.SetMetaSources(MetaSources{Maintenance: made("maintenance.log"), MCP: made("mcp.log"), Report: made("report.html")})
	for _, name := range []string{"maintenance.log", "mcp.log", "report.html"} {
		b, err := MetaFiles[name](e, func(ino uint64) bool { return ino == 7 })
		if err != nil || string(b) != name+" text" {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if len(asked) != 3 {
		t.Errorf("sources asked: %q", asked)
	}
}
