#!/usr/bin/env bash
# bench-vector.sh: the vector index of package search, without a mount:
# search latency p50/p95 over random queries at 10k and 100k vectors of
# 384 dimensions with one thread and all, next to the memory-bandwidth
# floor measured in the same run (reading as many bytes as the index's
# slab holds) and the ratio to it, and the cost of Put and Remove; once
# with the assembly kernel and once with the pure-Go one (-tags purego).
# The work is done by scripts/vecbench (see its header). About a minute.
#
#   bash scripts/bench-vector.sh                      # from the repo root
#   SCALES=10000 QUERIES=100 bash scripts/bench-vector.sh   # quick
#
# Environment: SCALES (10000,100000), QUERIES (200), DIM (384), OUT
# (scripts/out). Other work on the machine skews the numbers: the floor is
# measured alongside so that the ratio stays meaningful.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SCALES=${SCALES:-10000,100000}
QUERIES=${QUERIES:-200}
DIM=${DIM:-384}
OUT=${OUT:-scripts/out}
BIN=$(mktemp -d "${TMPDIR:-/tmp}/mnemofs-vec.XXXXXX")
trap 'rm -rf "$BIN"' EXIT

mkdir -p "$OUT"
go build -o "$BIN/vecbench" ./scripts/vecbench
go build -tags purego -o "$BIN/vecbench-go" ./scripts/vecbench
stamp=$(date +%Y%m%d-%H%M%S)
res=$OUT/bench-vector-$stamp.md
{
	echo "## bench-vector $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, kernel $(uname -r), load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Command: SCALES=$SCALES QUERIES=$QUERIES DIM=$DIM bash scripts/bench-vector.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	echo
	echo "### Assembly kernel (AVX2+FMA where the CPU has it)"
	echo
	"$BIN/vecbench" -scales "$SCALES" -queries "$QUERIES" -dim "$DIM"
	echo
	echo "### Pure-Go kernel (-tags purego)"
	echo
	"$BIN/vecbench-go" -scales "$SCALES" -queries "$QUERIES" -dim "$DIM"
	echo
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} | tee "$res"
echo "bench-vector: written to $res" >&2
