#!/usr/bin/env bash
# bench-cache.sh: the hot-memory caches (mount --cache-size) on and off:
#   1. store.ReadAt of whole files (~1 KiB, 64 KiB, 200 KiB), cold (first
#      read after opening the store, page cache dropped) and warm;
#   2. the same files through a real mount, each read a fresh open with
#      posix_fadvise(DONTNEED) first so the kernel's page cache (kept across
#      opens) does not answer in place of mnemofs;
#   3. repeated searches through views.Engine.Search and readdir of
#      search/<q>/, first run vs repeats;
# with p50/p95 latency and the caches' hit rates. The work is done by
# scripts/cachebench (see its header); this script builds it, gives it a
# scratch area on disk and cleans up (mount, scratch) on exit. About a
# minute on 2 cores.
#
#   bash scripts/bench-cache.sh                       # from the repo root
#   CB_FLAGS='-small 500 -medium 50' bash scripts/bench-cache.sh   # quick
#
# Environment: CB_FLAGS (extra cachebench flags), SCRATCH_PARENT
# (/var/tmp), OUT (scripts/out), KEEP=1 keeps the scratch area. Run as root
# so the page cache can be dropped for the cold runs.
set -euo pipefail

NAME=bench-cache
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
is_root || echo "bench-cache: warning: not root: cold runs keep the page cache" >&2

OUT=${OUT:-scripts/out}
CB_FLAGS=${CB_FLAGS:-}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-cache.XXXXXX")

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	unmount_if_mounted "$SCRATCH/work/mnt" # cachebench unmounts itself unless killed
	if [ "${KEEP:-0}" = 1 ]; then
		echo "bench-cache: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$SCRATCH/work" "$OUT"
go build -o "$SCRATCH/bin/cachebench" ./scripts/cachebench

fstype=$(df -T "$SCRATCH" | awk 'NR==2 {print $2}')
[ "$fstype" = tmpfs ] && echo "bench-cache: warning: $SCRATCH is on tmpfs, not a disk; set SCRATCH_PARENT" >&2
stamp=$(date +%Y%m%d-%H%M%S)
res=$OUT/bench-cache-$stamp.md
{
	echo "## bench-cache $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM, kernel $(uname -r), scratch on $fstype, load average at start $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Command: CB_FLAGS='$CB_FLAGS' bash scripts/bench-cache.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	echo
	# shellcheck disable=SC2086
	"$SCRATCH/bin/cachebench" -work "$SCRATCH/work" $CB_FLAGS
	echo
	echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
} | tee "$res"
echo "bench-cache: written to $res" >&2
