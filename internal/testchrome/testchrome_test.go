package testchrome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyCatchesRequests is the control of every no-network check: a
// page that fetches an image is caught, the same page with the report's
// Content-Security-Policy is not, and its script still runs.
func TestProxyCatchesRequests(t *testing.T) {
	b := New(t)
	dir := t.TempDir()
	open := filepath.Join(dir, "open.html")
	shut := filepath.Join(dir, "shut.html")
	body := `<body><img src="http://example.com/x.png"><img src="https://example.org/y.png"><script>document.body.setAttribute("data-js","ran")</script></body>`
	csp := `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`
	if err := os.WriteFile(open, []byte("<!DOCTYPE html><html><head></head>"+body+"</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shut, []byte("<!DOCTYPE html><html><head>"+csp+"</head>"+body+"</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.DumpDOM(t, open)
	if n, _ := b.Requests(); n == 0 {
		t.Fatal("a page fetching two images made no request the proxy saw: the check is blind")
	}
	before, _ := b.Requests()
	dom := b.DumpDOM(t, shut)
	if n, last := b.Requests(); n != before {
		t.Fatalf("the page under the CSP made %d requests (last %s)", n-before, last)
	}
	if !strings.Contains(dom, `data-js="ran"`) {
		t.Fatalf("inline script did not run under the CSP:\n%s", dom)
	}
}

func TestElementCount(t *testing.T) {
	dom := `<div><svg id="a" class="chart"><g><svg><rect class="bar x"/></svg></g><rect class="bar"></rect></svg><svg id="b"><rect class="bar"/></svg></div>`
	a := Element(dom, "a")
	if got := Count(a, "rect", "bar"); got != 2 {
		t.Fatalf("Count = %d in %q", got, a)
	}
	if Element(dom, "zz") != "" {
		t.Fatal("found a missing id")
	}
}
