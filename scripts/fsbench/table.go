// Summary tables: `fsbench table RESULT.json...` merges the JSON reports of
// several runs (rounds and targets) into Markdown tables.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// table prints Markdown tables summarising JSON reports: per target (label)
// and operation, the median over the runs of each run's median (and p95).
func table(files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("table needs RESULT.json files")
	}
	var labels, ops []string
	units := map[string]string{}
	vals := map[string]map[string][]float64{} // "median"/"p95" + op + label
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if !seen["l"+r.Label] {
			seen["l"+r.Label] = true
			labels = append(labels, r.Label)
		}
		for _, x := range r.Results {
			if !seen["o"+x.Name] {
				seen["o"+x.Name] = true
				ops = append(ops, x.Name)
			}
			units[x.Name] = x.Unit
			m := map[string]float64{"median": x.Median, "p95": x.P95}
			if x.DaemonCPU > 0 {
				m["cpu"] = x.DaemonCPU
				seen["cpu"] = true
			}
			for k, v := range m {
				key := k + "\x00" + x.Name
				if vals[key] == nil {
					vals[key] = map[string][]float64{}
				}
				vals[key][r.Label] = append(vals[key][r.Label], v)
			}
		}
	}
	// The usual targets first, in this order; others after them.
	rank := map[string]int{"native": 1, "loopback": 2, "loopback-nopt": 3, "mnemofs": 4, "mnemofs-before": 5}
	sort.SliceStable(labels, func(i, j int) bool {
		ri, rj := rank[labels[i]], rank[labels[j]]
		return ri != 0 && (rj == 0 || ri < rj)
	})
	// Ratio columns: mnemofs over each loopback target; with an earlier
	// build in the same rounds (bench-fs.sh BEFORE_BIN), that build over
	// loopback too, and mnemofs over it.
	var ratio [][2]string
	for _, num := range []string{"mnemofs", "mnemofs-before"} {
		for _, l := range labels {
			if strings.HasPrefix(l, "loopback") && seen["l"+num] && (num == "mnemofs" || l == "loopback") {
				ratio = append(ratio, [2]string{num, l})
			}
		}
	}
	if seen["lmnemofs"] && seen["lmnemofs-before"] {
		ratio = append(ratio, [2]string{"mnemofs", "mnemofs-before"})
	}
	for _, kind := range []string{"median", "p95"} {
		title := "Latency, median of per-run medians (µs; lower is better)"
		if kind == "p95" {
			title = "Latency, median of per-run p95 (µs)"
		}
		printTable(title, kind, "us", labels, ops, units, vals, ratio)
	}
	if seen["cpu"] {
		printTable("FUSE daemon CPU time per operation (µs, all its threads, including background work done while the operation ran)", "cpu", "us", labels, ops, units, vals, ratio)
	}
	printTable("Throughput (MiB/s; higher is better)", "median", "MiB/s", labels, ops, units, vals, ratio)
	return nil
}

func printTable(title, kind, unit string, labels, ops []string, units map[string]string, vals map[string]map[string][]float64, ratio [][2]string) {
	fmt.Printf("\n%s\n\n| op | %s |", title, strings.Join(labels, " | "))
	sep := "|---|" + strings.Repeat("---:|", len(labels))
	for _, r := range ratio {
		fmt.Printf(" %s/%s |", r[0], r[1])
		sep += "---:|"
	}
	fmt.Printf("\n%s\n", sep)
	for _, op := range ops {
		if units[op] != unit {
			continue
		}
		v := vals[kind+"\x00"+op]
		fmt.Printf("| %s |", op)
		for _, l := range labels {
			if len(v[l]) == 0 {
				fmt.Print(" – |")
				continue
			}
			fmt.Printf(" %s |", format(med(v[l])))
		}
		for _, r := range ratio {
			if lo := med(v[r[1]]); lo > 0 && len(v[r[0]]) > 0 {
				fmt.Printf(" %.2f× |", med(v[r[0]])/lo)
			} else {
				fmt.Print(" – |")
			}
		}
		fmt.Println()
	}
}

func med(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func format(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
