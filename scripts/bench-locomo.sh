#!/usr/bin/env bash
# bench-locomo.sh: LoCoMo retrieval recall@5/@10 and query latency of
# mnemofs's search/ directories (protocol: the LoCoMo README; the work is
# done by scripts/locomo, see its header). Builds mnemofs and scripts/locomo,
# mounts an empty store, writes the turns and asks the questions through the
# mount, then unmounts (also on error or Ctrl-C) and removes the scratch area.
#
#   bash scripts/bench-locomo.sh                          # all conversations
#   bash scripts/bench-locomo.sh -conv 26,30 -dump /tmp/locomo.jsonl
#   bash scripts/bench-locomo.sh -json > locomo.json
#   bash scripts/bench-locomo.sh -keep                    # keep the store
#   bash scripts/bench-locomo.sh -layout jsonl            # one turns.jsonl a session, a line a turn
#   bash scripts/bench-locomo.sh -model DIR               # hybrid search with an embedding model
#   bash scripts/bench-locomo.sh -data DIR -no-write      # re-query a kept store
#   BACKEND=etcd bash scripts/bench-locomo.sh             # the store on etcd
#
# Options read here: -data DIR (store; default a fresh one in the scratch
# area), -mnt DIR (mount point; default in the scratch area), -model DIR
# (mount --model: hybrid search; the questions wait for the embeddings), -keep (leave the
# store and binaries; the mount is still taken down). Everything else goes
# to scripts/locomo: -conv LIST, -json, -dump FILE, -k N, -locomo DIR,
# -layout files|jsonl, -no-write. Environment: LOCOMO_DIR (/work/shared/bench/locomo),
# SCRATCH_PARENT (/var/tmp), BACKEND (badger, or etcd: a 3-member etcd
# cluster on loopback started for the run, lib.sh's etcd_start, holds the
# store, --backend etcd://.../locomo; -data then holds only host-local
# state, and -keep keeps neither the cluster nor its store).
# scripts/bench-etcd-scale.sh runs this with both backends, side by side.
set -euo pipefail

NAME=bench-locomo
. "$(dirname "$0")/lib.sh"

DATA= MNT= KEEP=0 NOWRITE=0 MODEL=
BACKEND=${BACKEND:-badger}
case $BACKEND in badger | etcd) ;; *) die "BACKEND: want badger or etcd, got $BACKEND" ;; esac
ARGS=()
while [ $# -gt 0 ]; do
	case $1 in
	-data | --data) DATA=${2:?-data needs a directory}; shift ;;
	-mnt | --mnt) MNT=${2:?-mnt needs a directory}; shift ;;
	-keep | --keep) KEEP=1 ;;
	-model | --model) MODEL=${2:?-model needs a model directory}; shift ;;
	-h | -help | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-conv | -dump | -k | -locomo | -layout | --conv | --dump | --k | --locomo | --layout)
		ARGS+=("$1" "${2:?$1 needs a value}"); shift ;;
	*)
		case $1 in -no-write | --no-write) NOWRITE=1 ;; esac
		ARGS+=("$1") ;;
	esac
	shift
done

# The ranking expands queries with WordNet when its database is installed
# (the reported numbers are with it): install Debian's wordnet-base if
# missing and MNEMOFS_WORDNET does not say otherwise.
if [ -z "${MNEMOFS_WORDNET:-}" ] && [ ! -e /usr/share/wordnet/index.noun ]; then
	echo "bench-locomo: installing wordnet-base" >&2
	SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wordnet-base >/dev/null ||
		echo "bench-locomo: no WordNet: queries are not expanded with it" >&2
fi

SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-locomo.XXXXXX")
DATA=${DATA:-$SCRATCH/data}
MNT=${MNT:-$SCRATCH/mnt}
MOUNT_PID=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$MOUNT_PID" ] && kill -0 "$MOUNT_PID" 2>/dev/null; then
		kill -TERM "$MOUNT_PID" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$MOUNT_PID" 2>/dev/null || break
			sleep 0.1
		done
	fi
	unmount_if_mounted "$MNT"
	etcd_stop
	if [ "$KEEP" = 1 ] && [ "$BACKEND" = etcd ]; then
		echo "bench-locomo: kept $SCRATCH; the store was on the run's etcd cluster, which is gone" >&2
	elif [ "$KEEP" = 1 ]; then
		echo "bench-locomo: kept the store in $DATA (mount it with: $SCRATCH/bin/mnemofs mount --data $DATA MNT)" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$DATA" "$MNT"
if [ "$NOWRITE" = 0 ] && [ -n "$(ls -A "$DATA")" ]; then
	die "$DATA is not empty: the protocol needs an empty store (add -no-write to query the turns already in it)"
fi
go build -C "$ROOT" -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
go build -C "$ROOT" -o "$SCRATCH/bin/locomo" ./scripts/locomo

GLOBAL=(--data "$DATA")
WHERE=$DATA
if [ "$BACKEND" = etcd ]; then
	etcd_start "$SCRATCH/etcd"
	GLOBAL+=(--backend "etcd://$ETCD_EPS/locomo")
	WHERE="etcd $ETCD_VERSION (3 members on loopback), host-local state in $DATA"
fi
"$SCRATCH/bin/mnemofs" "${GLOBAL[@]}" mount ${MODEL:+--model "$MODEL"} "$MNT" >"$SCRATCH/mount.log" 2>&1 &
MOUNT_PID=$!
wait_for "$SCRATCH/mount.log" '^mnemofs: mounted' "$MOUNT_PID"

echo "bench-locomo: mnemofs $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?'), $(nproc) CPUs, store $WHERE" >&2
"$SCRATCH/bin/locomo" -mnt "$MNT" "${ARGS[@]}"
