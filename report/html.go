package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// HTML is the page for the memories of st that may allows (nil: all the
// store's user sees).
func HTML(st *store.Store, may func(uint64) bool, o Options) ([]byte, error) {
	d, err := Collect(st, may, o)
	if err != nil {
		return nil, err
	}
	return Render(d), nil
}

// CSP forbids every fetch: the page is all inline.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

const style = `body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:960px;color:#222;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 6px;border-bottom:1px solid #ddd}
.sub{color:#666}.row{display:flex;flex-wrap:wrap;gap:16px}.row>div{flex:1 1 420px}
svg.chart{width:100%;height:auto;background:#fafafa;border:1px solid #eee}
.tick,.value,.legend-label,.label,.node-label{font-size:11px;fill:#444}.empty{font-size:13px;fill:#888}
.total{font-size:22px;fill:#222}.axis{stroke:#999}
line.edge{stroke:#999;stroke-opacity:.5;stroke-width:1}line.edge.hl{stroke:#d62728;stroke-opacity:1;stroke-width:2}
circle.node{stroke:#fff;stroke-width:1}li.warning{color:#a40}.ok{color:#370}
.key{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right}`

// script marks that scripts ran (data-js) and lights a node's links on
// hover.
const script = `document.documentElement.setAttribute("data-js","ready");
var g=document.getElementById("graph");
if(g){g.addEventListener("mouseover",function(e){var i=e.target.getAttribute&&e.target.getAttribute("data-i");
if(i===null||i===undefined)return;g.querySelectorAll("line.edge").forEach(function(l){
var on=l.getAttribute("data-a")===i||l.getAttribute("data-b")===i;l.classList.toggle("hl",on)})})}`

// Render writes the page of d.
func Render(d *Data) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
	fmt.Fprintf(&b, `<meta http-equiv="Content-Security-Policy" content="%s">`, CSP)
	b.WriteString(`<meta name="viewport" content="width=device-width,initial-scale=1"><title>mnemofs report</title><style>` + style + `</style></head><body>`)
	scope := "the whole store"
	if d.Scope != "" {
		scope = "only the memories " + esc(d.Scope) + " may see"
	}
	fmt.Fprintf(&b, `<h1>mnemofs report</h1><p class="sub" id="summary">%d memories, %s · %s · generated %s</p>`,
		d.Memories, fmtBytes(d.Bytes), scope, d.Generated.Format(time.RFC3339))

	b.WriteString(`<h2>Growth</h2>`)
	fmt.Fprintf(&b, `<p class="sub">Memories created a %s (by their created time) and edits that kept an old version; the line is memories in all.</p>`, d.Bucket)
	labels := make([]string, len(d.Days))
	created, vers, cum := make([]float64, len(d.Days)), make([]float64, len(d.Days)), make([]float64, len(d.Days))
	bytesNew, bytesVer, cumB := make([]float64, len(d.Days)), make([]float64, len(d.Days)), make([]float64, len(d.Days))
	var c, cb float64
	for i, g := range d.Days {
		labels[i] = g.Date
		created[i], vers[i] = float64(g.Created), float64(g.Versions)
		bytesNew[i], bytesVer[i] = float64(g.Bytes), float64(g.VersionBytes)
		c += created[i]
		cb += bytesNew[i]
		cum[i], cumB[i] = c, cb
	}
	count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
	size := func(v float64) string { return fmtBytes(uint64(v)) }
	timeBars(&b, "growth", "memories per "+d.Bucket, labels,
		[]series{{"g-new", "#4e79a7", "new memories", created}, {"g-ver", "#f28e2b", "versions", vers}}, cum, "g-total", count)
	b.WriteString(`<div class="sub"><span class="key" style="background:#4e79a7"></span>new memories<span class="key" style="background:#f28e2b"></span>edits kept as versions</div>`)
	timeBars(&b, "growth-bytes", "bytes per "+d.Bucket, labels,
		[]series{{"gb-new", "#4e79a7", "bytes of new memories", bytesNew}, {"gb-ver", "#f28e2b", "bytes of versions", bytesVer}}, cumB, "gb-total", size)

	b.WriteString(`<div class="row"><div><h2>Tiers</h2>`)
	donut(&b, d.Tiers)
	fmt.Fprintf(&b, `</div><div><h2>Top tags</h2><p class="sub" id="tags-note">%s</p>`, topNote(len(d.Tags), d.NTags, "tags"))
	hbars(&b, "tags", "tags", d.Tags)
	fmt.Fprintf(&b, `<h2>Top users</h2><p class="sub" id="users-note">%s</p>`, topNote(len(d.Users), d.NUsers, "users"))
	hbars(&b, "users", "users", d.Users)
	b.WriteString(`</div></div>`)

	g := d.Graph
	b.WriteString(`<h2>Associations</h2>`)
	note := fmt.Sprintf("%d memories linked by %d related links, in %s (the largest of %d memories).", g.AllNodes, g.AllEdges, plural(g.Components, "group"), g.Largest)
	if g.Capped {
		part := ""
		if g.Whole > 0 {
			part = plural(g.Whole, "group") + " whole, largest first"
		}
		if g.Cut > 0 {
			if part != "" {
				part += ", and "
			}
			of := "of the next group"
			if g.Whole == 0 {
				of = "of the largest group"
			}
			part += fmt.Sprintf("the %d memories nearest the most-linked one %s, along links", g.Cut, of)
		}
		note += fmt.Sprintf(" Capped: showing %d of the %d memories (%s) and the %d links between them; %d memories and %d links are left out.",
			len(g.Nodes), g.AllNodes, part, len(g.Edges), g.AllNodes-len(g.Nodes), g.AllEdges-len(g.Edges))
	} else {
		note += " All are shown."
	}
	fmt.Fprintf(&b, `<p class="sub" id="graph-cap" data-shown="%d" data-total="%d" data-capped="%t">%s Hover a memory for its path.</p>`,
		len(g.Nodes), g.AllNodes, g.Capped, note)
	graphSVG(&b, g)
	b.WriteString(`<div class="sub">`)
	for _, t := range Tiers {
		fmt.Fprintf(&b, `<span class="key" style="background:%s"></span>%s`, tierColor[t], t)
	}
	b.WriteString(`</div>`)

	b.WriteString(`<h2>Maintenance</h2>`)
	maintenance(&b, d)

	b.WriteString(`<h2>Latency</h2><p class="sub">Requests served by the process that generated this page, since it started.</p>`)
	latencySVG(&b, d.Latency)

	b.WriteString(`<h2>Warnings</h2>`)
	if len(d.Warnings) == 0 {
		b.WriteString(`<p class="ok" id="warnings">No warnings: everything is within the policy's health thresholds.</p>`)
	} else {
		b.WriteString(`<ul id="warnings">`)
		for _, w := range d.Warnings {
			fmt.Fprintf(&b, `<li class="warning">%s</li>`, esc(w))
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(`<p class="sub">From meta/stats.json. This page shows paths, names, tags, users and counts only, never what a memory says.</p>`)
	b.WriteString(`<script>` + script + `</script></body></html>` + "\n")
	return []byte(b.String())
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "s") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func topNote(shown, all int, what string) string {
	if all > shown {
		return fmt.Sprintf("The %d with most memories of %d %s.", shown, all, what)
	}
	return fmt.Sprintf("All %d %s.", all, what)
}

// maintenance draws the actions of each day with a pass, stacked by kind
// (rect.m-bar, data-kind), and errors (rect.m-err).
func maintenance(b *strings.Builder, d *Data) {
	labels := make([]string, len(d.Maint))
	var layers []series
	total := map[string]int{}
	for k, kind := range d.Kinds {
		s := series{class: "m-bar", color: kindColors[k%len(kindColors)], label: kind, v: make([]float64, len(d.Maint))}
		for i, m := range d.Maint {
			s.v[i] = float64(m.Kinds[kind])
			total[kind] += m.Kinds[kind]
		}
		layers = append(layers, s)
	}
	errs := series{class: "m-err", color: "#d62728", label: "errors", v: make([]float64, len(d.Maint))}
	passes, nerr := 0, 0
	for i, m := range d.Maint {
		labels[i] = m.Date
		errs.v[i] = float64(m.Errors)
		passes += m.Passes
		nerr += m.Errors
	}
	layers = append(layers, errs)
	fmt.Fprintf(b, `<p class="sub" id="maint-note">%s on %s (meta/maintenance.log keeps the last 400); actions by kind a day.</p>`, plural(passes, "pass"), plural(len(d.Maint), "day"))
	timeBars(b, "maintenance", "maintenance actions a day", labels, layers, nil, "", func(v float64) string { return fmt.Sprintf("%.0f", v) })
	b.WriteString(`<div class="sub">`)
	for k, kind := range d.Kinds {
		fmt.Fprintf(b, `<span class="key" style="background:%s"></span>%s %d`, kindColors[k%len(kindColors)], esc(kind), total[kind])
	}
	fmt.Fprintf(b, `<span class="key" style="background:#d62728"></span>errors %d</div>`, nerr)
}
