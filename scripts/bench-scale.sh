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

die() {
	echo "bench-scale: $*" >&2
	exit 1
}

cd "$(dirname "$0")/.."
[ -f go.mod ] && grep -q '^module github.com/mnemofs/mnemofs' go.mod || die "run from a mnemofs checkout"
command -v go >/dev/null || die "go is not installed"
[ -e /dev/fuse ] || die "FUSE is not available (/dev/fuse is missing): load it with 'modprobe fuse', or in a container run with --device /dev/fuse"
if [ "$(id -u)" != 0 ]; then
	command -v fusermount3 >/dev/null || die "mounting as a non-root user needs fusermount3: install fuse3 (e.g. 'sudo apt-get install fuse3')"
fi

N=${N:-100000}
OUT=${OUT:-scripts/out}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-scale.XXXXXX")

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if grep -qF " $SCRATCH/mnt fuse" /proc/mounts; then
		fusermount3 -uz "$SCRATCH/mnt" 2>/dev/null || umount -l "$SCRATCH/mnt" || echo "bench-scale: could not unmount $SCRATCH/mnt" >&2
	fi
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
