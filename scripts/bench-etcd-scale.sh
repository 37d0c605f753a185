#!/usr/bin/env bash
# bench-etcd-scale.sh: the store on etcd against the store on Badger, in the
# same invocation, for what bench-etcd.sh does not measure:
#   1. import rate: ROUNDS imports of IMPORT_N files on each backend, in
#      alternating order (bench-scale.sh IMPORT_ONLY=1);
#   2. LoCoMo recall@5/@10 through a mount, each layout of LAYOUTS on each
#      backend (bench-locomo.sh -json -dump), and how many questions' top-10
#      lists differ from Badger's (the rankings should be the same);
#   3. N memories: import, mount time, first search, RSS (bench-scale.sh).
# Each run with BACKEND=etcd starts its own 3-member etcd cluster on
# loopback (lib.sh's etcd_start) and stops it; nothing is shared between
# runs. The raw outputs go to OUT/etcd-scale-STAMP/, a summary to stdout.
#
#   bash scripts/bench-etcd-scale.sh                  # from the repo root
#   N=20000 ROUNDS=1 LAYOUTS=files bash scripts/bench-etcd-scale.sh   # quick
#
# Environment: N (100000; 0 skips part 3), IMPORT_N (20000), ROUNDS (3;
# 0 skips part 1), LAYOUTS ("files jsonl"; empty skips part 2), OUT
# (scripts/out); SCRATCH_PARENT and LOCOMO_DIR go to the scripts it runs.
set -euo pipefail

NAME=bench-etcd-scale
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
N=${N:-100000}
IMPORT_N=${IMPORT_N:-20000}
ROUNDS=${ROUNDS:-3}
LAYOUTS=${LAYOUTS-files jsonl}
OUT=${OUT:-scripts/out}
command -v python3 >/dev/null || die "python3 is needed for the summary"
RES=$OUT/etcd-scale-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RES"
export OUT=$RES # the runs' own reports go there too

echo "## bench-etcd-scale $(basename "$RES")"
echo
echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r); mnemofs $(git describe --always --dirty 2>/dev/null || echo '?')."
echo "Command: N=$N IMPORT_N=$IMPORT_N ROUNDS=$ROUNDS LAYOUTS=\"$LAYOUTS\" bash scripts/bench-etcd-scale.sh"

# files/s of a bench-scale report's import row.
rate() { sed -n 's/^| import | .*\*\*\([0-9]*\) files\/s\*\*.*/\1/p' "$1"; }

if [ "$ROUNDS" -gt 0 ]; then
	for r in $(seq "$ROUNDS"); do
		order="badger etcd"
		[ $((r % 2)) = 0 ] && order="etcd badger"
		for b in $order; do
			echo "$NAME: import round $r: $b" >&2
			BACKEND=$b N=$IMPORT_N IMPORT_ONLY=1 bash scripts/bench-scale.sh >"$RES/import-$r-$b.md"
		done
	done
	echo
	echo "| import of $IMPORT_N files (files/s) | $(seq -s ' | ' "$ROUNDS" | sed 's/[0-9][0-9]*/round &/g') | median |"
	echo "|---|$(printf -- '---:|%.0s' $(seq $((ROUNDS + 1))))"
	for b in badger etcd; do
		rs=()
		for r in $(seq "$ROUNDS"); do rs+=("$(rate "$RES/import-$r-$b.md")"); done
		med=$(printf '%s\n' "${rs[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
		echo "| $b | $(printf '%s | ' "${rs[@]}")$med |"
	done
fi

if [ -n "$LAYOUTS" ]; then
	for l in $LAYOUTS; do
		for b in badger etcd; do
			echo "$NAME: LoCoMo, layout $l: $b" >&2
			BACKEND=$b bash scripts/bench-locomo.sh -layout "$l" -json -dump "$RES/locomo-$l-$b.jsonl" >"$RES/locomo-$l-$b.json" 2>"$RES/locomo-$l-$b.log"
		done
	done
	echo
	python3 - "$RES" $LAYOUTS <<'PY'
import json, sys
res, layouts = sys.argv[1], sys.argv[2:]
print("| LoCoMo, layout | backend | questions | recall@5 | recall@10 | query p50 / p95 | writing the turns | top-10 lists unlike Badger's |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for l in layouts:
    tops = {}
    for b in ("badger", "etcd"):
        r = json.load(open(f"{res}/locomo-{l}-{b}.json"))
        tops[b] = [(q["conv"], q["qa_index"], q["top"]) for q in map(json.loads, open(f"{res}/locomo-{l}-{b}.jsonl"))]
        o = r["overall"]
        diff = sum(x != y for x, y in zip(tops["badger"], tops[b])) + abs(len(tops["badger"]) - len(tops[b]))
        print(f"| {l} | {b} | {o['questions']} | {o['recall5']:.4f} | {o['recall10']:.4f} | {o['p50_ms']:.2f} / {o['p95_ms']:.2f} ms | {r['write_seconds']:.1f} s | {diff} |")
PY
fi

if [ "$N" -gt 0 ]; then
	for b in badger etcd; do
		echo "$NAME: $N memories: $b" >&2
		BACKEND=$b N=$N bash scripts/bench-scale.sh >"$RES/scale-$b.md"
	done
	echo
	python3 - "$RES" "$N" <<'PY'
import re, sys
res, n = sys.argv[1], sys.argv[2]
rows, order = {}, []
for b in ("badger", "etcd"):
    seen = {}
    for line in open(f"{res}/scale-{b}.md"):
        m = re.match(r"^\| (.+?) \| (.*) \|$", line.rstrip("\n"))
        if not m or m.group(1).startswith(("measure", "---", "mount log", "etcd member")):
            continue
        seen[m.group(1)] = seen.get(m.group(1), 0) + 1
        k = m.group(1) + ("" if seen[m.group(1)] == 1 else " (%d)" % seen[m.group(1)])
        if k not in rows:
            rows[k] = {}
            order.append(k)
        rows[k][b] = m.group(2)
print(f"| {n} memories | Badger | etcd |")
print("|---|---|---|")
for k in order:
    print(f"| {k} | {rows[k].get('badger', '')} | {rows[k].get('etcd', '')} |")
PY
	grep -h '^| etcd member' "$RES/scale-etcd.md" || true
fi
echo
echo "Raw outputs: $RES"
