// Command mcpbench measures the MCP server against the mount on one store
// of -n memories: p50/p95 of view, create, str_replace and search over MCP
// stdio (the SDK's own client, one call at a time), side by side in the
// same run with the same operations through the mount, both as system
// calls from this process and as the shell tools an agent runs (cat, tee,
// sed -i, ls search/<q>/). Each round runs one operation of each kind on
// every side, in a rotating order, so that the machine's noise falls on all
// of them alike. Then the mount stops and the same MCP operations run with
// the server holding the store itself (no control socket hop).
//
// The store is generated in -work/src (0.6-1 KiB Markdown memories with
// front matter, under semantic/topic-NN/), imported unmounted with
// `mnemofs import`, and mounted at -work/mnt. Markdown goes to stdout. Run
// through scripts/bench-mcp.sh, which builds the binaries and cleans up:
//
//	go run ./scripts/mcpbench -bin ./mnemofs -work /var/tmp/mb [-n 10000 -ops 300]
package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	bin  string
	work string
	data string
	mnt  string
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

// side is one way of doing the four operations.
type side struct {
	name string
	ops  map[string]func(i int) // view, create, str_replace, search
	lat  map[string][]time.Duration
}

func (s *side) run(op string, i int) {
	start := time.Now()
	s.ops[op](i)
	s.lat[op] = append(s.lat[op], time.Since(start))
}

var opNames = []string{"view", "create", "str_replace", "search"}

func main() {
	n := 10000
	ops := 300
	for i := 1; i < len(os.Args); i++ {
		switch a := os.Args[i]; a {
		case "-bin", "-work", "-n", "-ops":
			i++
			v := os.Args[i]
			switch a {
			case "-bin":
				bin = v
			case "-work":
				work = v
			case "-n":
				fmt.Sscan(v, &n)
			case "-ops":
				fmt.Sscan(v, &ops)
			}
		default:
			check(fmt.Errorf("unknown flag %s", a))
		}
	}
	if bin == "" || work == "" || n < 4*ops {
		check(fmt.Errorf("usage: mcpbench -bin MNEMOFS -work DIR [-n N -ops K] (N >= 4K)"))
	}
	data, mnt = filepath.Join(work, "data"), filepath.Join(work, "mnt")
	src := filepath.Join(work, "src")
	check(os.MkdirAll(mnt, 0o755))
	t0 := time.Now()
	rels := generate(src, n)
	out, err := exec.Command(bin, "import", "--data", data, src).Output()
	if err != nil {
		check(fmt.Errorf("import: %v\n%s", err, out))
	}
	fmt.Printf("Store: %d memories (%s), generated and imported with `mnemofs import` in %.1f s.\n\n", n, strings.TrimSpace(lastLine(out)), time.Since(t0).Seconds())

	// Marker state: memory i's marker is m<i>-<k>; str_replace moves k on.
	marker := make([]int, n)
	bump := func(i int) (string, string) {
		old := fmt.Sprintf("marker: m%05d-%d", i, marker[i])
		marker[i]++
		return old, fmt.Sprintf("marker: m%05d-%d", i, marker[i])
	}
	queries := func(seed uint64) func(int) string {
		r := rand.New(rand.NewPCG(seed, 1))
		return func(int) string { return common[20+r.IntN(len(common)-20)] + " " + common[20+r.IntN(len(common)-20)] }
	}
	// pick returns the i-th memory of the quarter q (the sides never share
	// a memory, so none reads another's cache).
	pick := func(q, i int) int { return (i*4 + q) % n }

	m := startMount()
	cs, mcpProc := startMCP()
	mcpSide := func(name string, cs *sdk.ClientSession, q int, seed uint64) *side {
		query := queries(seed)
		return &side{name: name, lat: map[string][]time.Duration{}, ops: map[string]func(int){
			"view": func(i int) {
				call(cs, "memory", map[string]any{"command": "view", "path": "/memories/" + rels[pick(q, i)]})
			},
			"create": func(i int) {
				call(cs, "memory", map[string]any{"command": "create", "path": fmt.Sprintf("/memories/working/bench/%s-%05d.md", name, i),
					"file_text": string(memoryText(rand.New(rand.NewPCG(9, uint64(i))), i, 0))})
			},
			"str_replace": func(i int) {
				k := pick(q, i)
				old, repl := bump(k)
				call(cs, "memory", map[string]any{"command": "str_replace", "path": "/memories/" + rels[k], "old_str": old, "new_str": repl})
			},
			"search": func(i int) { call(cs, "search", map[string]any{"query": query(i)}) },
		}}
	}
	sysQuery, toolQuery := queries(2), queries(3)
	sys := &side{name: "mount, system calls", lat: map[string][]time.Duration{}, ops: map[string]func(int){
		"view": func(i int) { _, err := os.ReadFile(filepath.Join(mnt, rels[pick(1, i)])); check(err) },
		"create": func(i int) {
			check(os.WriteFile(filepath.Join(mnt, fmt.Sprintf("working/bench/sys-%05d.md", i)), memoryText(rand.New(rand.NewPCG(9, uint64(i))), i, 0), 0o644))
		},
		"str_replace": func(i int) { // what sed -i does: read, write a new file, rename it over
			k := pick(1, i)
			old, repl := bump(k)
			p := filepath.Join(mnt, rels[k])
			b, err := os.ReadFile(p)
			check(err)
			tmp := filepath.Join(filepath.Dir(p), ".sed"+filepath.Base(p))
			check(os.WriteFile(tmp, []byte(strings.Replace(string(b), old, repl, 1)), 0o644))
			check(os.Rename(tmp, p))
		},
		"search": func(i int) { _, err := os.ReadDir(filepath.Join(mnt, "search", sysQuery(i))); check(err) },
	}}
	tool := &side{name: "mount, shell tools", lat: map[string][]time.Duration{}, ops: map[string]func(int){
		"view": func(i int) { sh(nil, "cat", filepath.Join(mnt, rels[pick(2, i)])) },
		"create": func(i int) {
			sh(memoryText(rand.New(rand.NewPCG(9, uint64(i))), i, 0), "tee", filepath.Join(mnt, fmt.Sprintf("working/bench/tool-%05d.md", i)))
		},
		"str_replace": func(i int) {
			k := pick(2, i)
			old, repl := bump(k)
			sh(nil, "sed", "-i", "s/"+old+"/"+repl+"/", filepath.Join(mnt, rels[k]))
		},
		"search": func(i int) { sh(nil, "ls", filepath.Join(mnt, "search", toolQuery(i))) },
	}}
	check(os.MkdirAll(filepath.Join(mnt, "working/bench"), 0o755))
	viaMount := mcpSide("mcp-mount", cs, 0, 1)
	sides := []*side{viaMount, sys, tool}
	warm(sides)
	for i := range ops {
		for k, op := range opNames {
			for j := range sides {
				sides[(i+k+j)%len(sides)].run(op, i)
			}
		}
	}
	cs.Close()
	mcpProc.Wait()
	stopMount(m)

	// The server holding the store itself.
	cs, mcpProc = startMCP()
	alone := mcpSide("mcp-alone", cs, 3, 4)
	warm([]*side{alone})
	for i := range ops {
		for _, op := range opNames {
			alone.run(op, i)
		}
	}
	cs.Close()
	mcpProc.Wait()

	report(ops, viaMount, alone, sys, tool)
}

// warm runs a few of each operation on every side, unmeasured.
func warm(sides []*side) {
	for _, s := range sides {
		for _, op := range opNames {
			for i := range 5 {
				s.ops[op](100000 + i)
			}
		}
	}
}

func call(cs *sdk.ClientSession, tool string, args map[string]any) {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	check(err)
	if res.IsError {
		check(fmt.Errorf("%s %v: %v", tool, args["path"], res.Content[0].(*sdk.TextContent).Text))
	}
}

func sh(stdin []byte, name string, args ...string) {
	c := exec.Command(name, args...)
	if stdin != nil {
		c.Stdin = strings.NewReader(string(stdin))
	}
	out, err := c.CombinedOutput()
	if err != nil {
		check(fmt.Errorf("%s %v: %v\n%s", name, args, err, out))
	}
}

func startMount() *exec.Cmd {
	c := exec.Command(bin, "mount", "--data", data, mnt)
	pipe, err := c.StdoutPipe()
	check(err)
	c.Stderr = os.Stderr
	check(c.Start())
	check(os.WriteFile(filepath.Join(work, "mount.pid"), []byte(fmt.Sprint(c.Process.Pid)), 0o644))
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "mnemofs: mounted") {
			go func() {
				for sc.Scan() {
				}
			}()
			return c
		}
	}
	check(fmt.Errorf("the mount exited before it was ready"))
	return nil
}

func stopMount(c *exec.Cmd) {
	c.Process.Signal(syscall.SIGTERM)
	c.Wait()
	os.Remove(filepath.Join(work, "mount.pid"))
}

func startMCP() (*sdk.ClientSession, *exec.Cmd) {
	c := exec.Command(bin, "mcp", "--data", data)
	c.Stderr = os.Stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "mcpbench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: c}, nil)
	check(err)
	return cs, c
}

func lastLine(b []byte) string {
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	return ls[len(ls)-1]
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

func report(ops int, via, alone, sys, tool *side) {
	fmt.Printf("%d operations of each kind on each side; latency in ms, p50 / p95.\n\n", ops)
	fmt.Println("| operation | MCP stdio, through the mount | MCP stdio, holding the store | mount, system calls | mount, shell tool | MCP (mount) ÷ syscalls, p50 | MCP (mount) ÷ shell tool, p50 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	toolName := map[string]string{"view": "cat", "create": "tee", "str_replace": "sed -i", "search": "ls search/q/"}
	sysName := map[string]string{"view": "read", "create": "write", "str_replace": "read, write, rename", "search": "readdir search/q/"}
	for _, op := range opNames {
		cell := func(s *side) string { return ms(pct(s.lat[op], 0.5)) + " / " + ms(pct(s.lat[op], 0.95)) }
		r := func(a, b *side) string {
			return fmt.Sprintf("%.2f×", float64(pct(a.lat[op], 0.5))/float64(pct(b.lat[op], 0.5)))
		}
		fmt.Printf("| %s | %s | %s | %s (%s) | %s (%s) | %s | %s |\n", op, cell(via), cell(alone), cell(sys), sysName[op], cell(tool), toolName[op], r(via, sys), r(via, tool))
	}
}
