package report

import (
	"container/heap"
	"sort"
)

// capNodes chooses at most max of the linked nodes so that what is drawn
// stays connected as it is in the store: whole groups (connected
// components), largest first; then, of the first group that does not
// fit, the nodes around its most-linked one, grown along links (the
// most-linked neighbour first) until max. less orders nodes by links,
// most first (ties by path); root names a node's group. It returns the
// nodes, how many groups are whole, and how many nodes come from the
// group cut (0: none).
func capNodes(deg map[int]int, adj map[int][]int, root func(int) int, less func(a, b int) bool, max int) (nodes []int, whole, cut int) {
	groups := map[int][]int{}
	for n := range deg {
		r := root(n)
		groups[r] = append(groups[r], n)
	}
	list := make([][]int, 0, len(groups))
	for _, g := range groups {
		sort.Slice(g, func(a, b int) bool { return less(g[a], g[b]) })
		list = append(list, g)
	}
	sort.Slice(list, func(a, b int) bool {
		if len(list[a]) != len(list[b]) {
			return len(list[a]) > len(list[b])
		}
		return less(list[a][0], list[b][0])
	})
	for _, g := range list {
		if len(nodes)+len(g) <= max {
			nodes = append(nodes, g...)
			whole++
			continue
		}
		// Grow from the group's most-linked node.
		in := map[int]bool{g[0]: true}
		fr := &frontier{less: less, nodes: []int{g[0]}}
		for fr.Len() > 0 && len(nodes) < max {
			n := heap.Pop(fr).(int)
			nodes = append(nodes, n)
			cut++
			for _, m := range adj[n] {
				if !in[m] {
					in[m] = true
					heap.Push(fr, m)
				}
			}
		}
		break
	}
	return nodes, whole, cut
}

// frontier is a heap of nodes, the most linked on top.
type frontier struct {
	less  func(a, b int) bool
	nodes []int
}

func (f *frontier) Len() int           { return len(f.nodes) }
func (f *frontier) Less(a, b int) bool { return f.less(f.nodes[a], f.nodes[b]) }
func (f *frontier) Swap(a, b int)      { f.nodes[a], f.nodes[b] = f.nodes[b], f.nodes[a] }
func (f *frontier) Push(x any)         { f.nodes = append(f.nodes, x.(int)) }
func (f *frontier) Pop() any {
	n := f.nodes[len(f.nodes)-1]
	f.nodes = f.nodes[:len(f.nodes)-1]
	return n
}
