#!/usr/bin/env bash
# bench-scale.sh: mnemofs with 100k memories: import rate of 1 KiB Markdown
# files (goal >= 3000 files/s), mount time (cold and warm) and the mount
# process's RSS after mounting, after `find`, and after `cat` of 1000 files.
# The work is done by scripts/scale (see its header); this script builds it
# and mnemofs, gives it a scratch area on disk, and cleans up on exit.
#
#   bash scripts/bench-scale.sh              # from the repo root
#   N=20000 bash scripts/bench-scale.sh      # smaller
#
# Environment: N (100000), SCRATCH_PARENT (/var/tmp), OUT (scripts/out),
# KEEP=1 keeps the scratch area. Run as root to measure a cold mount.
set -euo pipefail

NAME=bench-scale
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

N=${N:-100000}
OUT=${OUT:-scripts/out}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-scale.XXXXXX")

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	unmount_if_mounted "$SCRATCH/mnt"
	if [ "${KEEP:-0}" = 1 ]; then
		echo "bench-scale: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$OUT"
go build -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
go build -o "$SCRATCH/bin/scale" ./scripts/scale

fstype=$(df -T "$SCRATCH" | awk 'NR==2 {print $2}')
stamp=$(date +%Y%m%d-%H%M%S)
{
	echo "## bench-scale $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r), scratch on $fstype."
	echo "Command: N=$N bash scripts/bench-scale.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	echo
	"$SCRATCH/bin/scale" -bin "$SCRATCH/bin/mnemofs" -work "$SCRATCH" -n "$N"
} | tee "$OUT/bench-scale-$stamp.md"
echo "bench-scale: written to $OUT/bench-scale-$stamp.md" >&2
