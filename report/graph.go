package report

import (
	"math"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// Graph is the association graph of related/related_files links between
// the memories shown, capped to the MaxNodes with most links.
type Graph struct {
	Nodes []Node
	Edges [][2]int // indexes into Nodes, a < b
	// Before the cap: memories with at least one link, distinct links,
	// connected components and the largest one's size.
	AllNodes, AllEdges, Components, Largest int
	// Capped: not all are drawn; then Whole groups are, and Cut nodes
	// of the next group around its most-linked one.
	Capped     bool
	Whole, Cut int
}

// Node is one memory of the graph, placed by the layout in [0,1]².
type Node struct {
	Path   string
	Tier   string
	Degree int
	X, Y   float64
}

// buildGraph links the memories whose Related names another one's path
// (store.Info.Related carries resolved links at their current path),
// keeps at most maxNodes of them (capNodes) and lays them out.
func buildGraph(infos []store.Info, maxNodes int) Graph {
	idx := make(map[string]int, len(infos))
	for i, in := range infos {
		idx[in.Path] = i
	}
	type pair struct{ a, b int }
	seen := map[pair]bool{}
	var edges []pair
	deg := map[int]int{}
	for i, in := range infos {
		for _, r := range in.Related {
			j, ok := lookup(idx, in.Path, r)
			if !ok || j == i {
				continue
			}
			p := pair{min(i, j), max(i, j)}
			if seen[p] {
				continue
			}
			seen[p] = true
			edges = append(edges, p)
			deg[p.a]++
			deg[p.b]++
		}
	}
	g := Graph{AllNodes: len(deg), AllEdges: len(edges)}
	// Components (union-find) of the whole graph, for the caption.
	parent := map[int]int{}
	var find func(int) int
	find = func(x int) int {
		if p, ok := parent[x]; ok && p != x {
			r := find(p)
			parent[x] = r
			return r
		}
		parent[x] = x
		return x
	}
	for _, e := range edges {
		parent[find(e.a)] = find(e.b)
	}
	size := map[int]int{}
	for n := range deg {
		size[find(n)]++
	}
	g.Components = len(size)
	for _, s := range size {
		g.Largest = max(g.Largest, s)
	}
	// The cap (cap.go): whole groups, then the nodes around the most
	// linked one of the next.
	adj := map[int][]int{}
	for _, e := range edges {
		adj[e.a] = append(adj[e.a], e.b)
		adj[e.b] = append(adj[e.b], e.a)
	}
	less := func(a, b int) bool {
		if deg[a] != deg[b] {
			return deg[a] > deg[b]
		}
		return infos[a].Path < infos[b].Path
	}
	nodes, whole, cut := capNodes(deg, adj, find, less, maxNodes)
	g.Capped, g.Whole, g.Cut = len(nodes) < len(deg), whole, cut
	// Order by component then path, so the start layout keeps a
	// component together and is the same each time.
	sort.SliceStable(nodes, func(a, b int) bool {
		ca, cb := find(nodes[a]), find(nodes[b])
		if ca != cb {
			return infos[ca].Path < infos[cb].Path
		}
		return infos[nodes[a]].Path < infos[nodes[b]].Path
	})
	at := map[int]int{}
	for k, n := range nodes {
		at[n] = k
		g.Nodes = append(g.Nodes, Node{Path: infos[n].Path, Tier: tierOf(infos[n].Path), Degree: deg[n]})
	}
	for _, e := range edges {
		a, oka := at[e.a]
		b, okb := at[e.b]
		if oka && okb {
			g.Edges = append(g.Edges, [2]int{min(a, b), max(a, b)})
		}
	}
	sort.Slice(g.Edges, func(x, y int) bool {
		if g.Edges[x][0] != g.Edges[y][0] {
			return g.Edges[x][0] < g.Edges[y][0]
		}
		return g.Edges[x][1] < g.Edges[y][1]
	})
	layout(g.Nodes, g.Edges)
	return g
}

// layout places nodes by Fruchterman-Reingold force direction with a
// pull to the centre (so separate components stay on the page), from a
// deterministic start on a spiral, then scales the result into [0,1]².
// It stops early past a time budget: a page must not take long.
func layout(nodes []Node, edges [][2]int) {
	n := len(nodes)
	if n == 0 {
		return
	}
	x, y := make([]float64, n), make([]float64, n)
	for i := range nodes {
		a := float64(i) * 2.399963 // golden angle
		r := math.Sqrt(float64(i)+0.5) / math.Sqrt(float64(n))
		x[i], y[i] = r*math.Cos(a), r*math.Sin(a)
	}
	k := math.Sqrt(4.0 / float64(n)) // ideal distance in a 2x2 box
	dx, dy := make([]float64, n), make([]float64, n)
	const iters = 300
	deadline := time.Now().Add(2 * time.Second)
	temp := 0.2
	for it := 0; it < iters && time.Now().Before(deadline); it++ {
		clear(dx)
		clear(dy)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				ex, ey := x[i]-x[j], y[i]-y[j]
				d2 := ex*ex + ey*ey
				if d2 < 1e-9 {
					ex, ey, d2 = 1e-3*float64(i-j), 1e-3, 1e-6
				}
				f := k * k / d2 // repulsion k²/d, along e/d
				dx[i] += ex * f
				dy[i] += ey * f
				dx[j] -= ex * f
				dy[j] -= ey * f
			}
		}
		for _, e := range edges {
			a, b := e[0], e[1]
			ex, ey := x[a]-x[b], y[a]-y[b]
			d := math.Sqrt(ex*ex+ey*ey) + 1e-9
			f := d / k // attraction d²/k, along e/d
			dx[a] -= ex * f
			dy[a] -= ey * f
			dx[b] += ex * f
			dy[b] += ey * f
		}
		for i := 0; i < n; i++ {
			dx[i] -= x[i] * 0.5 * k * 4 // gravity
			dy[i] -= y[i] * 0.5 * k * 4
			d := math.Sqrt(dx[i]*dx[i]+dy[i]*dy[i]) + 1e-9
			s := math.Min(d, temp) / d
			x[i] += dx[i] * s
			y[i] += dy[i] * s
		}
		temp *= 0.985
	}
	minX, maxX, minY, maxY := x[0], x[0], y[0], y[0]
	for i := range x {
		minX, maxX = math.Min(minX, x[i]), math.Max(maxX, x[i])
		minY, maxY = math.Min(minY, y[i]), math.Max(maxY, y[i])
	}
	// One scale for both axes (the page's box is 3:2), centred; a few
	// nodes stay near the middle rather than at the corners.
	span := math.Max(math.Max(maxX-minX, (maxY-minY)*1.5), 1e-9)
	if n < 10 {
		span = math.Max(span, 1.5*float64(10)/float64(n+1)*k)
	}
	cx, cy := (minX+maxX)/2, (minY+maxY)/2
	for i := range nodes {
		nodes[i].X = 0.5 + (x[i]-cx)/span
		nodes[i].Y = 0.5 + (y[i]-cy)/span*1.5
	}
}

// lookup finds the memory a link names: its current path when the store
// resolved it, else the link as written, as the store resolves it (from
// the memory's directory, then from the root). Only the memories shown
// are in idx, so a link never reveals one the reader may not see.
func lookup(idx map[string]int, from, link string) (int, bool) {
	if j, ok := idx[link]; ok {
		return j, true
	}
	if !strings.HasPrefix(link, "/") {
		if j, ok := idx[path.Join(path.Dir(from), link)]; ok {
			return j, true
		}
	}
	j, ok := idx[path.Clean("/"+link)]
	return j, ok
}

// name is the last element of a path, for labels.
func name(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
