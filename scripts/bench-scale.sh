#!/usr/bin/env bash
# bench-scale.sh: mnemofs with 100k memories: import rate of 1 KiB Markdown
# files (goal >= 3000 files/s), mount time (cold and warm) and the mount
# process's RSS after mounting, after `find`, and after `cat` of 1000 files.
# The work is done by scripts/scale (see its header); this script builds it
# and mnemofs, gives it a scratch area on disk, and cleans up on exit.
#
#   bash scripts/bench-scale.sh              # from the repo root
#   N=20000 bash scripts/bench-scale.sh      # smaller
#   BACKEND=etcd bash scripts/bench-scale.sh # the store on etcd
#
# BACKEND=etcd starts a 3-member etcd cluster on loopback (lib.sh's
# etcd_start) and puts the store on it (--backend etcd://.../scale); the
# data directory then holds only host-local state, the size reported is one
# member's bbolt file (member/snap; its WAL, preallocated in 64 MiB files,
# is left out), and the members' memory is reported at the end.
# scripts/bench-etcd-scale.sh runs this with both backends, side by side.
#
# Environment: N (100000), BACKEND (badger or etcd), IMPORT_INDEX=0 (import
# --index=false: the first mount builds the index), IMPORT_ONLY=1 (stop
# after the import: no mount), SCRATCH_PARENT
# (/var/tmp), OUT (scripts/out), KEEP=1 keeps the scratch area. Run as root
# to measure a cold mount.
set -euo pipefail

NAME=bench-scale
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

N=${N:-100000}
BACKEND=${BACKEND:-badger}
case $BACKEND in badger | etcd) ;; *) die "BACKEND: want badger or etcd, got $BACKEND" ;; esac
OUT=${OUT:-scripts/out}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-scale.XXXXXX")

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	unmount_if_mounted "$SCRATCH/mnt"
	etcd_stop
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
ARGS=()
[ "${IMPORT_ONLY:-0}" = 1 ] && ARGS+=(-import-only)
[ "${IMPORT_INDEX:-1}" = 0 ] && ARGS+=(-no-index)
if [ "$BACKEND" = etcd ]; then
	etcd_start "$SCRATCH/etcd"
	ARGS+=(-backend "etcd://$ETCD_EPS/scale" -store "$SCRATCH/etcd/etcd-m0/member/snap")
fi

fstype=$(df -T "$SCRATCH" | awk 'NR==2 {print $2}')
stamp=$(date +%Y%m%d-%H%M%S)
{
	echo "## bench-scale $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r), scratch on $fstype."
	echo "Command: BACKEND=$BACKEND N=$N IMPORT_INDEX=${IMPORT_INDEX:-1} IMPORT_ONLY=${IMPORT_ONLY:-0} bash scripts/bench-scale.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	[ "$BACKEND" = badger ] || echo "Store on etcd $ETCD_VERSION, 3 members on loopback sharing the machine's CPUs."
	echo
	"$SCRATCH/bin/scale" -bin "$SCRATCH/bin/mnemofs" -work "$SCRATCH" -n "$N" "${ARGS[@]}"
	for p in "${ETCD_PIDS[@]}"; do
		echo "| etcd member $p at the end | $(awk '/^VmRSS|^VmHWM/ {printf "%s %.1f MiB ", $1, $2/1024}' "/proc/$p/status") |"
	done
} | tee "$OUT/bench-scale-$stamp.md"
echo "bench-scale: written to $OUT/bench-scale-$stamp.md" >&2
