package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The charts: each an inline <svg> with a stable id, its marks with stable
// classes, built as text here (every string from the store through esc).

// tierColor colours the tiers, the same in every chart.
var tierColor = map[string]string{
	"episodic": "#4e79a7", "semantic": "#59a14f", "working": "#f28e2b",
	"archive": "#9c755f", "trash": "#e15759", "other": "#bab0ac",
}

// kindColors colour maintenance kinds by their order.
var kindColors = []string{"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f"}

// esc makes s safe as HTML text or a quoted attribute value: valid UTF-8,
// no control characters, markup escaped.
func esc(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '\uFFFD'
		}
		return r
	}, s)
	return html.EscapeString(s)
}

// clip shortens a label to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func fmtBytes(b uint64) string {
	const u = 1024
	if b < u {
		return fmt.Sprintf("%d B", b)
	}
	f, i := float64(b), 0
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	for f /= u; f >= u && i < len(units)-1; f /= u {
		i++
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

func fmtUS(us uint64) string {
	switch {
	case us >= 1_000_000:
		return fmt.Sprintf("%.1f s", float64(us)/1e6)
	case us >= 1000:
		return fmt.Sprintf("%.1f ms", float64(us)/1e3)
	}
	return fmt.Sprintf("%d µs", us)
}

// series is one stacked layer of a bar chart over the buckets.
type series struct {
	class, color, label string
	v                   []float64
}

// timeBars draws stacked bars over labelled buckets, with an optional
// cumulative line (class lineClass) on its own scale.
func timeBars(b *strings.Builder, id, title string, labels []string, layers []series, line []float64, lineClass string, unit func(float64) string) {
	const W, H, L, R, T, B = 860.0, 230.0, 56.0, 64.0, 14.0, 34.0
	n := len(labels)
	fmt.Fprintf(b, `<svg id="%s" class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, id, W, H, esc(title))
	if n == 0 {
		fmt.Fprintf(b, `<text class="empty" x="%g" y="%g">nothing yet</text></svg>`, W/2, H/2)
		return
	}
	top := 0.0
	for i := 0; i < n; i++ {
		s := 0.0
		for _, l := range layers {
			s += l.v[i]
		}
		top = math.Max(top, s)
	}
	top = math.Max(top, 1)
	pw, ph := W-L-R, H-T-B
	bw := pw / float64(n)
	barw := math.Min(math.Max(bw*0.8, 0.5), 48)
	fmt.Fprintf(b, `<line class="axis" x1="%g" y1="%g" x2="%g" y2="%g"/>`, L, T+ph, L+pw, T+ph)
	fmt.Fprintf(b, `<text class="tick" x="%g" y="%g" text-anchor="end">%s</text>`, L-4, T+8, esc(unit(top)))
	fmt.Fprintf(b, `<text class="tick" x="%g" y="%g" text-anchor="end">0</text>`, L-4, T+ph)
	for i := 0; i < n; i++ {
		y := T + ph
		for _, l := range layers {
			if l.v[i] <= 0 {
				continue
			}
			h := math.Max(l.v[i]/top*ph, 1)
			y -= h
			fmt.Fprintf(b, `<rect class="%s" data-series="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`,
				l.class, esc(l.label), L+float64(i)*bw+(bw-barw)/2, y, barw, h, l.color, esc(labels[i]), esc(l.label), esc(unit(l.v[i])))
		}
	}
	for _, i := range uniqInts(0, n/2, n-1) {
		fmt.Fprintf(b, `<text class="tick" x="%.1f" y="%g" text-anchor="middle">%s</text>`, L+(float64(i)+0.5)*bw, H-B+16, esc(labels[i]))
	}
	if line != nil {
		lt := math.Max(line[n-1], 1)
		for _, v := range line {
			lt = math.Max(lt, v)
		}
		var p strings.Builder
		for i, v := range line {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&p, "%s%.1f %.1f ", cmd, L+(float64(i)+0.5)*bw, T+ph-v/lt*ph)
		}
		fmt.Fprintf(b, `<path class="%s" d="%s" fill="none" stroke="#222" stroke-width="1.5"/>`, lineClass, strings.TrimSpace(p.String()))
		fmt.Fprintf(b, `<text class="tick" x="%g" y="%g">%s in all</text>`, L+pw+4, T+8, esc(unit(lt)))
	}
	b.WriteString(`</svg>`)
}

func uniqInts(v ...int) []int {
	var out []int
	for _, x := range v {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// donut draws one slice (path.slice, data-tier) per tier with memories.
func donut(b *strings.Builder, shares []Share) {
	const W, H, cx, cy, r0, r1 = 480.0, 240.0, 120.0, 120.0, 60.0, 110.0
	fmt.Fprintf(b, `<svg id="tiers" class="chart" viewBox="0 0 %g %g" role="img" aria-label="memories by tier">`, W, H)
	total := 0
	for _, s := range shares {
		total += s.Files
	}
	if total == 0 {
		fmt.Fprintf(b, `<text class="empty" x="%g" y="%g">no memories</text></svg>`, cx, cy)
		return
	}
	pt := func(r, a float64) (float64, float64) { return cx + r*math.Sin(a), cy - r*math.Cos(a) }
	a, ly := 0.0, 30.0
	for _, s := range shares {
		if s.Files == 0 {
			continue
		}
		f := float64(s.Files) / float64(total)
		e := a + f*2*math.Pi
		var d string
		if f > 0.9999 { // a whole ring: two half arcs
			x0, y0 := pt(r1, 0)
			x1, y1 := pt(r1, math.Pi)
			x2, y2 := pt(r0, 0)
			x3, y3 := pt(r0, math.Pi)
			d = fmt.Sprintf("M%.2f %.2f A%g %g 0 1 1 %.2f %.2f A%g %g 0 1 1 %.2f %.2f Z M%.2f %.2f A%g %g 0 1 0 %.2f %.2f A%g %g 0 1 0 %.2f %.2f Z",
				x0, y0, r1, r1, x1, y1, r1, r1, x0, y0, x2, y2, r0, r0, x3, y3, r0, r0, x2, y2)
		} else {
			large := 0
			if e-a > math.Pi {
				large = 1
			}
			x0, y0 := pt(r1, a)
			x1, y1 := pt(r1, e)
			x2, y2 := pt(r0, e)
			x3, y3 := pt(r0, a)
			d = fmt.Sprintf("M%.2f %.2f A%g %g 0 %d 1 %.2f %.2f L%.2f %.2f A%g %g 0 %d 0 %.2f %.2f Z",
				x0, y0, r1, r1, large, x1, y1, x2, y2, r0, r0, large, x3, y3)
		}
		fmt.Fprintf(b, `<path class="slice" data-tier="%s" d="%s" fill="%s" fill-rule="evenodd"><title>%s: %d memories, %s</title></path>`,
			s.Tier, d, tierColor[s.Tier], s.Tier, s.Files, fmtBytes(s.Bytes))
		fmt.Fprintf(b, `<rect class="legend" x="250" y="%g" width="12" height="12" fill="%s"/><text class="legend-label" x="268" y="%g">%s %d (%.0f%%) %s</text>`,
			ly-10, tierColor[s.Tier], ly, s.Tier, s.Files, f*100, fmtBytes(s.Bytes))
		a, ly = e, ly+22
	}
	fmt.Fprintf(b, `<text class="total" x="%g" y="%g" text-anchor="middle">%d</text></svg>`, cx, cy+6, total)
}

// hbars draws one horizontal bar (rect.bar) per count.
func hbars(b *strings.Builder, id, what string, cs []Count) {
	const W, L, row = 420.0, 150.0, 20.0
	H := math.Max(float64(len(cs))*row+10, 40)
	fmt.Fprintf(b, `<svg id="%s" class="chart" viewBox="0 0 %g %g" role="img" aria-label="top %s">`, id, W, H, what)
	if len(cs) == 0 {
		fmt.Fprintf(b, `<text class="empty" x="10" y="24">no %s</text></svg>`, what)
		return
	}
	top := float64(cs[0].N)
	for i, c := range cs {
		y := 5 + float64(i)*row
		w := math.Max(float64(c.N)/top*(W-L-50), 1)
		fmt.Fprintf(b, `<text class="label" x="%g" y="%g" text-anchor="end">%s</text>`, L-6, y+13, esc(clip(c.Name, 22)))
		fmt.Fprintf(b, `<rect class="bar" data-label="%s" x="%g" y="%g" width="%.1f" height="%g" fill="#4e79a7"><title>%s: %d memories</title></rect>`,
			esc(c.Name), L, y+2, w, row-5, esc(c.Name), c.N)
		fmt.Fprintf(b, `<text class="value" x="%.1f" y="%g">%d</text>`, L+w+4, y+13, c.N)
	}
	b.WriteString(`</svg>`)
}

// graphSVG draws the association graph: line.edge (data-a, data-b) and
// circle.node (data-i), coloured by tier, the busiest nodes labelled.
func graphSVG(b *strings.Builder, g Graph) {
	const W, H, pad = 900.0, 600.0, 40.0
	fmt.Fprintf(b, `<svg id="graph" class="chart" viewBox="0 0 %g %g" role="img" aria-label="association graph">`, W, H)
	if len(g.Nodes) == 0 {
		fmt.Fprintf(b, `<text class="empty" x="%g" y="%g">no related links between the memories shown</text></svg>`, W/2-150, H/2)
		return
	}
	px := func(n Node) (float64, float64) { return pad + n.X*(W-2*pad), pad + n.Y*(H-2*pad) }
	for _, e := range g.Edges {
		x1, y1 := px(g.Nodes[e[0]])
		x2, y2 := px(g.Nodes[e[1]])
		fmt.Fprintf(b, `<line class="edge" data-a="%d" data-b="%d" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, e[0], e[1], x1, y1, x2, y2)
	}
	label := map[int]bool{}
	order := make([]int, len(g.Nodes))
	for i := range order {
		order[i] = i
	}
	// Labels: the 12 busiest; in a big graph only hubs (4 links or more),
	// so that labels do not pile up.
	for k := 0; k < 12 && k < len(order); k++ {
		best := k
		for j := k + 1; j < len(order); j++ {
			if g.Nodes[order[j]].Degree > g.Nodes[order[best]].Degree {
				best = j
			}
		}
		order[k], order[best] = order[best], order[k]
		if len(g.Nodes) <= 40 || g.Nodes[order[k]].Degree >= 4 {
			label[order[k]] = true
		}
	}
	for i, n := range g.Nodes {
		x, y := px(n)
		fmt.Fprintf(b, `<circle class="node" data-i="%d" data-tier="%s" cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s (%d links)</title></circle>`,
			i, n.Tier, x, y, 3+math.Sqrt(float64(n.Degree))*1.5, tierColor[n.Tier], esc(n.Path), n.Degree)
	}
	for i, n := range g.Nodes {
		if label[i] {
			x, y := px(n)
			fmt.Fprintf(b, `<text class="node-label" x="%.1f" y="%.1f">%s</text>`, x+6, y-6, esc(clip(name(n.Path), 24)))
		}
	}
	b.WriteString(`</svg>`)
}

// latencySVG draws p50/p95/p99 of each operation on a log scale
// (rect.lat-p50, rect.lat-p95, rect.lat-p99).
func latencySVG(b *strings.Builder, ls []Latency) {
	const W, L, row = 860.0, 70.0, 34.0
	H := math.Max(float64(len(ls))*row+30, 50)
	fmt.Fprintf(b, `<svg id="latency" class="chart" viewBox="0 0 %g %g" role="img" aria-label="latency percentiles">`, W, H)
	if len(ls) == 0 {
		b.WriteString(`<text class="empty" x="10" y="28">no requests timed in the process that generated this page (generate it through the mount: meta/report.html, or mnemofs report while mounted)</text></svg>`)
		return
	}
	var top uint64 = 1
	for _, l := range ls {
		top = max(top, l.P99)
	}
	lt := math.Log10(float64(top)*2 + 1)
	scale := func(us uint64) float64 { return math.Max(math.Log10(float64(us)+1)/lt*(W-L-280), 1) }
	cols := []struct {
		class, color string
		v            func(Latency) uint64
	}{{"lat-p50", "#59a14f", func(l Latency) uint64 { return l.P50 }},
		{"lat-p95", "#f28e2b", func(l Latency) uint64 { return l.P95 }},
		{"lat-p99", "#e15759", func(l Latency) uint64 { return l.P99 }}}
	for i, l := range ls {
		y := 20 + float64(i)*row
		fmt.Fprintf(b, `<text class="label" x="%g" y="%g" text-anchor="end">%s</text>`, L-6, y+14, esc(l.Op))
		for k, c := range cols {
			w := scale(c.v(l))
			fmt.Fprintf(b, `<rect class="lat %s" data-op="%s" x="%g" y="%g" width="%.1f" height="8" fill="%s"><title>%s %s: %s (%d requests)</title></rect>`,
				c.class, esc(l.Op), L, y+float64(k)*9, w, c.color, esc(l.Op), c.class[4:], fmtUS(c.v(l)), l.Count)
		}
		fmt.Fprintf(b, `<text class="value" x="%.1f" y="%g">p50 %s · p95 %s · p99 %s · %d</text>`, L+scale(l.P99)+6, y+14, fmtUS(l.P50), fmtUS(l.P95), fmtUS(l.P99), l.Count)
	}
	fmt.Fprintf(b, `<text class="tick" x="%g" y="12">log scale; bars are p50 / p95 / p99</text></svg>`, L)
}
