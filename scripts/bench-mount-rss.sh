#!/usr/bin/env bash
# bench-mount-rss.sh: the steady state of a big store's mounts, the case
# issue 20's goals are about (every mount but the first reads the index
# snapshot): a store of N scripts/scale memories is imported and mounted
# once (the build, which writes the snapshot), then mounted RUNS times;
# each run times `ls MNT/search/<two words>/` from the start of `mnemofs
# mount`, runs QUERIES three-word searches from the store's own words
# (common words: each touches long posting lists and reads ten results),
# and reads the mount's VmRSS, RssAnon and RssFile before unmounting.
# About 6 minutes at N=1000000 on 2 cores.
#
#   N=1000000 bash scripts/bench-mount-rss.sh
#
# Environment: N (100000), RUNS (3), QUERIES (1000), MOUNT_FLAGS (extra
# `mnemofs mount` flags, e.g. --cache-size 256MiB), PROFILE_DIR (each
# mount's heap profile at its end: mem.<run>.prof, and its log),
# SCRATCH_PARENT (/var/tmp), KEEP=1 keeps the scratch area.
set -euo pipefail

NAME=bench-mount-rss
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

N=${N:-100000}
RUNS=${RUNS:-3}
QUERIES=${QUERIES:-1000}
read -r -a FLAGS <<<"${MOUNT_FLAGS:-}"
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-rss.XXXXXX")
MNT=$SCRATCH/work/mnt
DATA=$SCRATCH/work/data

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	unmount_if_mounted "$MNT"
	if [ "${KEEP:-0}" = 1 ]; then
		echo "$NAME: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin"
go build -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
go build -o "$SCRATCH/bin/scale" ./scripts/scale
BIN=$SCRATCH/bin/mnemofs
"$SCRATCH/bin/scale" -bin "$BIN" -work "$SCRATCH/work" -n "$N" -import-only >"$SCRATCH/import.log" 2>&1 ||
	{ cat "$SCRATCH/import.log" >&2; die "import failed"; }
mkdir -p "$MNT"

# The words scripts/scale writes its memories with.
WORDS=(user prefers concise answers dark mode meeting notes project deadline deploy staging production
	database migration review feedback bug fix release plan agent memory context budget summary decision
	rationale follow tomorrow customer issue latency cache index python rust golang kubernetes terraform
	invoice travel flight hotel birthday recipe garden book)

# mount_once QUERIES RUN: one mount; prints the first search's time, the
# queries' time and the memory lines.
mount_once() {
	local q=$1 t0 t1 pid
	t0=$(date +%s.%N)
	MNEMOFS_MEMPROFILE=${PROFILE_DIR:+$PROFILE_DIR/mem.$2.prof} \
		"$BIN" mount --data "$DATA" "${FLAGS[@]}" "$MNT" >"$SCRATCH/mount.log" 2>&1 &
	pid=$!
	until ls "$MNT/search/morning coffee/" >/dev/null 2>&1; do
		kill -0 "$pid" 2>/dev/null || { cat "$SCRATCH/mount.log" >&2; die "the mount exited"; }
		sleep 0.01
	done
	t1=$(date +%s.%N)
	printf 'first search %.3f s' "$(echo "$t1 - $t0" | bc)"
	t0=$(date +%s.%N)
	for _ in $(seq "$q"); do
		ls "$MNT/search/${WORDS[RANDOM % ${#WORDS[@]}]} ${WORDS[RANDOM % ${#WORDS[@]}]} ${WORDS[RANDOM % ${#WORDS[@]}]}/" >/dev/null 2>&1
	done
	t1=$(date +%s.%N)
	printf '; %d queries %.2f s; ' "$q" "$(echo "$t1 - $t0" | bc)"
	awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %d MiB ", $1, $2/1024}' "/proc/$pid/status"
	echo
	"$BIN" unmount "$MNT"
	wait "$pid" || true
	grep -h "from its snapshot" "$SCRATCH/mount.log" | sed 's/^/    /' || true
	if [ -n "${PROFILE_DIR:-}" ]; then
		cp "$SCRATCH/mount.log" "$PROFILE_DIR/mount.$2.log"
	fi
}

echo "## $NAME $(date +%Y%m%d-%H%M%S): N=$N, $(nproc) CPUs, mnemofs $(git rev-parse --short HEAD)${MOUNT_FLAGS:+, flags $MOUNT_FLAGS}"
echo "build (first mount):"
[ -n "${PROFILE_DIR:-}" ] && mkdir -p "$PROFILE_DIR"
mount_once 10 0
for r in $(seq "$RUNS"); do
	echo "run $r (from the snapshot):"
	mount_once "$QUERIES" "$r"
done
