#!/usr/bin/env bash
# bench-embed.sh: sentence-embedding throughput of embed's encoder against
# cybertron v0.2.1 as it is, and against the machine's float32 matmul
# ceiling, all in one run. It
#   1. installs what it needs if missing (Debian: python3-numpy, and
#      libopenblas0-pthread, without which numpy uses the reference BLAS and
#      embed its pure-Go kernel);
#   2. writes a random model of all-MiniLM-L6-v2's shape (6 layers, 384
#      wide, 12 heads, 1536 intermediate, 30522 tokens) into a scratch dir
#      with scripts/testmodel;
#   3. measures, in ROUNDS rounds so that a burst of load from other users
#      of the machine hits every line alike, each round with 1 thread and
#      then all CPUs:
#      - the ceiling: numpy float32 N×N matmul (OpenBLAS sgemm) GFLOP/s with
#        OPENBLAS_NUM_THREADS set, median of CEIL_RUNS;
#      - sentences/s on TOKENS-token sentences with scripts/embedbench,
#        median of RUNS timed runs: embed with OpenBLAS, embed with its Go
#        kernel (assembly micro-kernel where the CPU has AVX2/AVX-512),
#        cybertron as it is (one sentence a call, GOMAXPROCS threads);
#   4. prints a Markdown table, also saved under $OUT: the median over the
#      rounds (and the rounds' range) of sentences/s, GFLOP/s (FLOPs a
#      sentence from the shape: the matrix products, 6·(2n(4H²+2HI)+4n²H)
#      = 0.60 GFLOP at n=28) and % of the ceiling at the same thread count.
#      The ceiling is the best round's median: load from others only lowers
#      it, and a short matmul that met a burst of it would otherwise make
#      the percentages meaningless; so they err low.
#
#   bash scripts/bench-embed.sh                # from anywhere, ~4 minutes
#   ROUNDS=1 RUNS=3 CYB_SENTENCES=8 bash scripts/bench-embed.sh   # quicker
#
# Environment: ROUNDS (3), RUNS (5), SENTENCES (256 a run for embed),
# CYB_SENTENCES (24, cybertron), CEIL_N (2048), CEIL_RUNS (7), TOKENS (28),
# OUT (scripts/out), KEEP=1 keeps the scratch dir.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
grep -q '^module github.com/mnemofs/mnemofs' go.mod || { echo "bench-embed: not in a mnemofs checkout" >&2; exit 1; }

ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-5}
SENTENCES=${SENTENCES:-256}
CYB_SENTENCES=${CYB_SENTENCES:-24}
CEIL_N=${CEIL_N:-2048}
CEIL_RUNS=${CEIL_RUNS:-7}
TOKENS=${TOKENS:-28}
OUT=${OUT:-scripts/out}
NCPU=$(nproc)
PY=/usr/bin/python3

need=()
[ -x $PY ] && $PY -c 'import numpy' 2>/dev/null || need+=(python3-numpy)
ldconfig -p | grep -q 'libopenblas\.so\.0' || need+=(libopenblas0-pthread)
if [ ${#need[@]} -gt 0 ]; then
	echo "bench-embed: installing ${need[*]}" >&2
	SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/mnemofs-embed.XXXXXX")
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then echo "bench-embed: kept $SCRATCH" >&2; else rm -rf "$SCRATCH"; fi
}
trap cleanup EXIT

go build -o "$SCRATCH/embedbench" ./scripts/embedbench
go run ./scripts/testmodel -shape minilm -seed 1 "$SCRATCH/model"

# ceiling THREADS: GFLOP/s of numpy's float32 matmul, median of CEIL_RUNS.
ceiling() {
	OPENBLAS_NUM_THREADS=$1 $PY - "$CEIL_N" "$CEIL_RUNS" <<'PY'
import sys, time, numpy as np
n, runs = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(1)
a = rng.random((n, n), dtype=np.float32); b = rng.random((n, n), dtype=np.float32)
a @ b
ts = []
for _ in range(runs):
    t = time.perf_counter(); a @ b; ts.append(time.perf_counter() - t)
ts.sort()
print("%.1f" % (2 * n**3 / ts[len(ts) // 2] / 1e9))
PY
}
blas=$(OPENBLAS_VERBOSE=2 $PY -c 'import numpy as np; a=np.ones((64,64),np.float32); a@a' 2>&1 | sed -n 's/^Core: //p' | head -1)
grep -q openblas <($PY -c 'import numpy, sys; print(open("/proc/self/maps").read())') ||
	echo "bench-embed: warning: numpy does not use OpenBLAS; the ceiling is not OpenBLAS's" >&2

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
results=$SCRATCH/results.jsonl
: >"$results"
bench() { "$SCRATCH/embedbench" -model "$SCRATCH/model" -tokens "$TOKENS" -runs "$RUNS" "$@" >>"$results"; }
for round in $(seq "$ROUNDS"); do
	echo "bench-embed: round $round of $ROUNDS" >&2
	for t in 1 "$NCPU"; do
		echo "{\"impl\":\"ceiling\",\"threads\":$t,\"gflops\":$(ceiling "$t")}" >>"$results"
		bench -impl embed -kernel openblas -threads "$t" -sentences "$SENTENCES"
		bench -impl embed -kernel go -threads "$t" -sentences "$SENTENCES"
		bench -impl cybertron -threads "$t" -sentences "$CYB_SENTENCES"
		[ "$NCPU" = 1 ] && break
	done
done

mkdir -p "$OUT"
stamp=$(date +%Y%m%d-%H%M%S)
report=$OUT/bench-embed-$stamp.md
{
	echo "## bench-embed $stamp"
	echo
	echo "Machine: $NCPU CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average at start $load_start; OpenBLAS core ${blas:-unknown}${OPENBLAS_CORETYPE:+ (OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE)}; mnemofs $(git describe --always --dirty 2>/dev/null || echo '?')."
	echo "Model: random, all-MiniLM-L6-v2's shape; $TOKENS-token sentences. Each cell: median over $ROUNDS rounds (range in brackets) of a round's median of $RUNS runs ($SENTENCES sentences a run, cybertron $CYB_SENTENCES); ceiling: the best round's median of $CEIL_RUNS ${CEIL_N}² float32 matmuls (range in brackets); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	$PY - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda xs: sorted(xs)[len(xs) // 2]
ceil, lines = {}, {}
for r in rows:
    if r["impl"] == "ceiling":
        ceil.setdefault(r["threads"], []).append(r["gflops"])
    else:
        lines.setdefault((r["threads"], r["impl"], r["kernel"]), []).append(r)
print("| threads | ceiling GFLOP/s | impl | kernel | sentences/s | GFLOP/s | % of ceiling |")
print("|---|---|---|---|---|---|---|")
for (t, impl, kernel), rs in lines.items():
    c = ceil[t]
    sps = [r["sentences_per_s"] for r in rs]
    gfl = med([r["gflops"] for r in rs])
    print("| %d | %.1f [%.0f–%.0f] | %s | %s | %.1f [%.1f–%.1f] | %.1f | %.1f%% |" % (
        t, max(c), min(c), max(c), impl, kernel, med(sps), min(sps), max(sps), gfl, 100 * gfl / max(c)))
gf = next(r["gflop_per_sentence"] for r in rows if r["impl"] != "ceiling")
print()
print("FLOPs a sentence: %.3f GFLOP (matrix products of the forward pass)." % gf)
PY
} | tee "$report"
echo "bench-embed: saved $report" >&2
