package main

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/search"
)

// Leave-one-conversation-out tuning (-loo GRID, in process only). The
// turns are written once; then every setting of the grid is asked every
// question, and for each conversation the setting with the best mean of
// recall@5 and recall@10 on the other conversations is chosen and
// reported on that one. The held-out numbers are what the ranking would
// do on a conversation its parameters never saw.
//
// GRID is "name=v1,v2,...;name=..." over the fields of search.Tuning
// (k1 b back decay prior reply meta ask syn hypo when); unnamed fields keep
// search.DefaultTuning's values. The first value of each list should be
// the default: ties go to the earlier setting.

// setting is one point of the grid.
type setting struct {
	t    search.Tuning
	desc string
}

// grid expands a GRID spec.
func grid(spec string) []setting {
	out := []setting{{t: search.DefaultTuning}}
	for _, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, vals, ok := strings.Cut(part, "=")
		if !ok {
			fail("-loo: %q is not name=v1,v2", part)
		}
		var next []setting
		for _, s := range out {
			for _, v := range strings.Split(vals, ",") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				check(err, "-loo "+name)
				t := s.t
				p := field(&t, strings.TrimSpace(name))
				if p == nil {
					fail("-loo: no parameter %q (k1 b back decay prior reply meta ask syn hypo when)", name)
				}
				*p = f
				next = append(next, setting{t: t, desc: strings.TrimSpace(s.desc + " " + name + "=" + strings.TrimSpace(v))})
			}
		}
		out = next
	}
	return out
}

func field(t *search.Tuning, name string) *float64 {
	switch name {
	case "k1":
		return &t.K1
	case "b":
		return &t.B
	case "back":
		return &t.Back
	case "decay":
		return &t.Decay
	case "prior":
		return &t.Prior
	case "syn":
		return &t.Synonyms
	case "hypo":
		return &t.Hyponyms
	case "when":
		return &t.When
	case "reply":
		return &t.Reply
	case "meta":
		return &t.Meta
	case "ask":
		return &t.Ask
	}
	return nil
}

// outcome is one question's recall under one setting.
type outcome struct {
	conv     string
	cat      int
	r5, r10  float64
	duration time.Duration
}

// loo runs the grid and prints the leave-one-out table.
func loo(ip *inproc, convs []*conv, spec string, k int) {
	settings := grid(spec)
	results := make([][]outcome, len(settings))
	for i, s := range settings {
		ip.eng.SetTuning(s.t)
		for _, c := range convs {
			for _, q := range c.QA {
				ev := (&report{}).evidence(c, q.Evidence)
				if len(ev) == 0 {
					continue
				}
				name, _, _ := queryName(q.Question, k)
				top, lat := ip.query(c.ID, name)
				r := score(c, q, ev, top)
				results[i] = append(results[i], outcome{c.ID, q.Category, r.Recall5, r.Recall10, lat})
			}
		}
	}
	ip.eng.SetTuning(search.DefaultTuning)
	mean := func(os []outcome, keep func(outcome) bool) (r5, r10 float64, n int) {
		for _, o := range os {
			if keep(o) {
				r5, r10, n = r5+o.r5, r10+o.r10, n+1
			}
		}
		if n == 0 {
			return 0, 0, 0
		}
		return r5 / float64(n), r10 / float64(n), n
	}
	fmt.Printf("leave-one-conversation-out over %d settings (%s), layout %s\n\n", len(settings), spec, layout)
	fmt.Printf("| held out | questions | chosen on the other four | recall@5 | recall@10 | in-sample best recall@5 / @10 |\n|---|---:|---|---:|---:|---:|\n")
	var held []outcome // each question under its fold's choice
	for _, c := range convs {
		best, bestV := 0, -1.0
		for i := range settings {
			r5, r10, _ := mean(results[i], func(o outcome) bool { return o.conv != c.ID })
			if v := (r5 + r10) / 2; v > bestV+1e-12 {
				best, bestV = i, v
			}
		}
		for _, o := range results[best] {
			if o.conv == c.ID {
				held = append(held, o)
			}
		}
		r5, r10, n := mean(results[best], func(o outcome) bool { return o.conv == c.ID })
		ib5, ib10 := 0.0, 0.0 // the best on this conversation itself, for comparison
		for i := range settings {
			a, b, _ := mean(results[i], func(o outcome) bool { return o.conv == c.ID })
			if (a+b)/2 > (ib5+ib10)/2 {
				ib5, ib10 = a, b
			}
		}
		fmt.Printf("| %s | %d | %s | %.3f | %.3f | %.3f / %.3f |\n", c.ID, n, cmpDesc(settings[best].desc), r5, r10, ib5, ib10)
	}
	r5, r10, n := mean(held, func(outcome) bool { return true })
	fmt.Printf("| **all (held-out)** | %d | | **%.3f** | **%.3f** | |\n", n, r5, r10)
	fmt.Printf("\nper category (held-out):\n\n| category | questions | recall@5 | recall@10 |\n|---|---:|---:|---:|\n")
	cats := map[int]bool{}
	for _, o := range held {
		cats[o.cat] = true
	}
	for _, cat := range slices.Sorted(maps.Keys(cats)) {
		r5, r10, n := mean(held, func(o outcome) bool { return o.cat == cat })
		fmt.Printf("| %d %s | %d | %.3f | %.3f |\n", cat, catName[cat], n, r5, r10)
	}
	var lats []time.Duration
	for _, o := range held {
		lats = append(lats, o.duration)
	}
	sort.Slice(lats, func(a, b int) bool { return lats[a] < lats[b] })
	fmt.Printf("\nin-process query latency (held-out runs): p50 %.2f ms, p95 %.2f ms\n", ms(lats[len(lats)/2]), ms(lats[len(lats)*95/100]))
	fmt.Printf("\nall settings (all five conversations, in-sample):\n\n| setting | recall@5 | recall@10 |\n|---|---:|---:|\n")
	for i, s := range settings {
		r5, r10, _ := mean(results[i], func(outcome) bool { return true })
		fmt.Printf("| %s | %.3f | %.3f |\n", cmpDesc(s.desc), r5, r10)
	}
}

func cmpDesc(d string) string {
	if d == "" {
		return "defaults"
	}
	return d
}
