#!/usr/bin/env bash
# bench-search.sh: mnemofs search and plain tools on a mount, side by side
# with the same files in a native directory (goal: search p95 <= 10 ms at
# 100k memories):
#   1. search/<q>/ latency p50/p95 at 1k, 10k and 100k memories vs
#      `grep -rl` over the generated source, time until the background
#      index is ready, and the mount's VmRSS;
#   2. cost per write of 1000 ~1 KiB memories through the mount into a 10k
#      store vs a native dir, time until all are searchable, stats.json
#      create/flush latency;
#   3. find / grep -r over by-user/<u> and episodic/ of the 10k store vs
#      native copies of the same files, cold and warm.
# The work is done by scripts/searchbench (see its header); this script
# builds it and mnemofs, gives it a scratch area on disk, and cleans up
# (mount, scratch) on exit. About 5 minutes on 2 cores.
#
#   bash scripts/bench-search.sh                          # from the repo root
#   SCALES=1000,10000 GREP_BUDGET=20s bash scripts/bench-search.sh   # quick
#
# Environment: SCALES (1000,10000,100000), QUERIES (200), GREP_BUDGET (60s
# per scale), DETAIL (10000: store size for sections 2 and 3, 0 skips),
# RUNS (3), SCRATCH_PARENT (/var/tmp), OUT (scripts/out), KEEP=1 keeps the
# scratch area, SB_FLAGS (extra searchbench flags). Run as root so the page
# cache can be dropped for the cold runs.
set -euo pipefail

NAME=bench-search
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
if ! is_root; then
	die "section 3 drops the page cache for cold runs: run as root"
fi

SCALES=${SCALES:-1000,10000,100000}
QUERIES=${QUERIES:-200}
GREP_BUDGET=${GREP_BUDGET:-60s}
DETAIL=${DETAIL:-10000}
RUNS=${RUNS:-3}
OUT=${OUT:-scripts/out}
SB_FLAGS=${SB_FLAGS:-}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-search.XXXXXX")

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	# searchbench unmounts itself; this covers it being killed.
	if [ -s "$SCRATCH/mount.pid" ]; then
		p=$(cat "$SCRATCH/mount.pid")
		kill -TERM "$p" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	fi
	unmount_if_mounted "$SCRATCH/mnt"
	if [ "${KEEP:-0}" = 1 ]; then
		echo "bench-search: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$OUT"
go build -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
go build -o "$SCRATCH/bin/searchbench" ./scripts/searchbench

fstype=$(df -T "$SCRATCH" | awk 'NR==2 {print $2}')
[ "$fstype" = tmpfs ] && echo "bench-search: warning: $SCRATCH is on tmpfs, not a disk; set SCRATCH_PARENT" >&2
stamp=$(date +%Y%m%d-%H%M%S)
res=$OUT/bench-search-$stamp.md
{
	echo "## bench-search $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, kernel $(uname -r), scratch on $fstype, load average at start $(cut -d' ' -f1-3 /proc/loadavg); $(grep --version | head -1), $(find --version | head -1)."
	echo "Command: SCALES=$SCALES QUERIES=$QUERIES GREP_BUDGET=$GREP_BUDGET DETAIL=$DETAIL RUNS=$RUNS bash scripts/bench-search.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	echo
	# shellcheck disable=SC2086
	"$SCRATCH/bin/searchbench" -bin "$SCRATCH/bin/mnemofs" -work "$SCRATCH" -scales "$SCALES" -queries "$QUERIES" \
		-grep-budget "$GREP_BUDGET" -detail "$DETAIL" -runs "$RUNS" $SB_FLAGS
	echo
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine during the run skews the numbers)."
} | tee "$res"
cp "$res" "$OUT/bench-search-results.md"
echo "bench-search: written to $res and $OUT/bench-search-results.md" >&2
