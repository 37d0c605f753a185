// Package testchrome loads pages in headless Chromium for tests (Debian
// package chromium-headless-shell only: see Binary): the DOM after scripts ran, a
// screenshot, and a count of every request the page tried to make.
//
// Every load runs with the network shut: host names resolve to nothing
// (--host-resolver-rules; the proxy's loopback address excepted) and every request, loopback included, is sent
// to a proxy of the test's that answers nothing and counts what it got,
// so a page that fetched anything at all is caught.
package testchrome

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testenv"
)

// Binary is the Chromium the tests load pages in: the old headless shell
// (Debian package chromium-headless-shell), which runs no browser
// services. The full browser (package chromium) is not used even when
// installed: its own background requests (component updates, account
// checks, network time) would be counted as the page's.
const Binary = "chromium-headless-shell"

// Find returns the Chromium binary ($MNEMOFS_CHROMIUM, else Binary on
// PATH). Without one the test is skipped, or fails when
// MNEMOFS_REQUIRE_FUSE=1 (CI, where .ci/run installs it).
func Find(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MNEMOFS_CHROMIUM"); p != "" {
		return p
	}
	if _, err := exec.LookPath(Binary); err != nil {
		if _, err := exec.LookPath("chromium"); err == nil {
			testenv.Missing(t, Binary+" is not on PATH (apt-get install "+Binary+"; the full chromium browser is not used: its own background requests would count as the page's)")
			return ""
		}
	}
	return testenv.Tool(t, Binary)
}

// Browser is one Chromium binary with a counting proxy.
type Browser struct {
	bin      string
	proxy    string
	requests atomic.Int64
	seen     atomic.Value // last request line
}

// New finds Chromium (see Find) and starts the proxy, closed when the
// test ends.
func New(t testing.TB) *Browser {
	t.Helper()
	b := &Browser{bin: Find(t)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.requests.Add(1)
		b.seen.Store(r.Method + " " + r.Host + r.URL.String())
		http.Error(w, "no network for this page", http.StatusForbidden)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	b.proxy = l.Addr().String()
	return b
}

// Requests is how many requests reached the proxy so far, and the last.
func (b *Browser) Requests() (int64, string) {
	s, _ := b.seen.Load().(string)
	return b.requests.Load(), s
}

// run runs Chromium on the page file with extra flags and returns its
// standard output.
func (b *Browser) run(t testing.TB, page string, extra ...string) []byte {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--disable-background-networking", "--disable-sync",
		"--disable-component-update", "--disable-default-apps", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--proxy-server=http://" + b.proxy, "--proxy-bypass-list=<-loopback>",
		"--virtual-time-budget=3000"}
	args = append(args, extra...)
	args = append(args, "file://"+abs)
	cmd := exec.CommandContext(ctx, b.bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.Dir = os.TempDir() // never inside a FUSE mount
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", b.bin, err, tail(stderr.String(), 2000))
	}
	return out
}

// DumpDOM loads page and returns its DOM after scripts ran.
func (b *Browser) DumpDOM(t testing.TB, page string) string {
	t.Helper()
	return string(b.run(t, page, "--dump-dom"))
}

// Screenshot loads page in a window w×h and writes a PNG to png.
func (b *Browser) Screenshot(t testing.TB, page, png string, w, h int) {
	t.Helper()
	abs, err := filepath.Abs(png)
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, page, "--screenshot="+abs, "--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h))
	if st, err := os.Stat(abs); err != nil || st.Size() == 0 {
		t.Fatalf("no screenshot written to %s: %v", abs, err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Element returns the outer HTML of the first element with id in dom
// ("" if none): from its start tag to the matching end tag of its name,
// counting nested elements of that name.
func Element(dom, id string) string {
	re := regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9]*)[^>]*\sid="` + regexp.QuoteMeta(id) + `"`)
	m := re.FindStringSubmatchIndex(dom)
	if m == nil {
		return ""
	}
	tag := dom[m[2]:m[3]]
	open := regexp.MustCompile(`<` + tag + `[\s>]`)
	end := "</" + tag + ">"
	depth, i := 0, m[0]
	for i < len(dom) {
		o := open.FindStringIndex(dom[i:])
		c := strings.Index(dom[i:], end)
		if c < 0 {
			return dom[m[0]:]
		}
		if o != nil && o[0] < c {
			depth++
			i += o[1]
			continue
		}
		depth--
		i += c + len(end)
		if depth == 0 {
			return dom[m[0]:i]
		}
	}
	return dom[m[0]:]
}

// Count counts the start tags of element name with class class (one of
// its classes) in s.
func Count(s, name, class string) int {
	re := regexp.MustCompile(`<` + name + `\s[^>]*class="([^"]*)"`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		for _, c := range strings.Fields(m[1]) {
			if c == class {
				n++
				break
			}
		}
	}
	return n
}
