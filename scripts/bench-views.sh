#!/usr/bin/env bash
# bench-views.sh: walking the generated views against the real tree. At
# each store size, the same 1,000 memories are listed (ls -l) and stat'ed
# (find -type f | xargs stat) through the tree and through by-user/,
# by-tag/, by-type/ and by-date/, side by side in one run (medians of RUNS
# after a warm-up); at LSR memories, ls -lR of the whole root. The work is
# done by scripts/viewbench; this script builds it and mnemofs, gives it a
# scratch area on disk and cleans up on exit. About 10 minutes on 2 cores.
#
#   bash scripts/bench-views.sh
#   SCALES=2000,10000 bash scripts/bench-views.sh      # quick
#
# Environment: SCALES (2000,10000,100000), RUNS (3), LSR (10000; 0 skips
# ls -lR), SCRATCH_PARENT (/var/tmp), OUT (scripts/out), KEEP=1 keeps the
# scratch area.
set -euo pipefail

NAME=bench-views
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

SCALES=${SCALES:-2000,10000,100000}
RUNS=${RUNS:-3}
LSR=${LSR:-10000}
OUT=${OUT:-scripts/out}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-views.XXXXXX")

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -s "$SCRATCH/mount.pid" ]; then
		p=$(cat "$SCRATCH/mount.pid")
		kill -TERM "$p" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
	fi
	for m in "$SCRATCH"/*/mnt; do unmount_if_mounted "$m"; done
	if [ "${KEEP:-0}" = 1 ]; then
		echo "bench-views: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$OUT"
go build -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
go build -o "$SCRATCH/bin/viewbench" ./scripts/viewbench
stamp=$(date +%Y%m%d-%H%M%S)
res=$OUT/bench-views-$stamp.md
{
	echo "## bench-views $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r), load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Command: SCALES=$SCALES RUNS=$RUNS LSR=$LSR bash scripts/bench-views.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	echo
	"$SCRATCH/bin/viewbench" -bin "$SCRATCH/bin/mnemofs" -work "$SCRATCH" -scales "$SCALES" -runs "$RUNS" -lsr "$LSR"
} | tee "$res"
echo "bench-views: wrote $res" >&2
