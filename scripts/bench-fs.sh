#!/usr/bin/env bash
# bench-fs.sh: per-operation latency and sequential throughput of mnemofs,
# side by side with the native disk and go-fuse's loopback (the baseline
# cost of FUSE through the same library), using scripts/fsbench. Targets:
#   native         a plain directory on the same disk
#   loopback       go-fuse's example/loopback (1 s TTLs); as root on a
#                  kernel >= 6.9 it uses FUSE passthrough, so file data
#                  bypasses the daemon
#   loopback-nopt  the same loopback with passthrough refused (fsbench
#                  loopback -no-passthrough): every read/write is a round
#                  trip, as in mnemofs
#   mnemofs        a fresh store mounted with mnemofs mount (FUSE
#                  passthrough for files just created and blob appends,
#                  when root on Linux >= 6.9)
#   mnemofs-nopt   the same with --no-passthrough: all data through the
#                  daemon
#   loopback-1p    stock loopback with GOMAXPROCS=1: the scheduler setting
#                  mnemofs gives itself on 2 CPUs (cmd/mnemofs leaveACPU)
#
# It builds the binaries, makes a scratch area on disk (not tmpfs), mounts
# the FUSE targets, and runs fsbench ROUNDS times against each target in
# rotating order so noise hits all alike. It prints Markdown tables of the
# median over rounds, and removes mounts and scratch data on exit.
#
#   bash scripts/bench-fs.sh                    # from the repo root
#   ROUNDS=1 ITERS=300 SEQ_MIB=16 bash scripts/bench-fs.sh   # quick
#
# Environment: ROUNDS (3), ITERS (2000), FILES (1000, readdir size),
# SEQ_MIB (64), SCRATCH_PARENT (/var/tmp), OUT (scripts/out), KEEP=1 keeps
# the scratch area, FSBENCH_FLAGS (extra fsbench flags), RUN_TIMEOUT (900 s
# per fsbench run), PY (1: also run the Python harness scripts/fsbench.py
# against each target in the same rounds, right after fsbench; 0 skips it),
# PY_ITERS (ITERS), BEFORE_BIN (a mnemofs binary built from an earlier
# commit: mounted as one more target, mnemofs-before, so a change is
# measured against the code before it in the same rounds). Run as root so the page cache can be dropped before the
# cold sequential read.
set -euo pipefail

NAME=bench-fs
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
if ! is_root; then
	echo "bench-fs: not root: the page cache cannot be dropped, so 'seq read (cold)' will be warm" >&2
fi

ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-2000}
FILES=${FILES:-1000}
SEQ_MIB=${SEQ_MIB:-64}
OUT=${OUT:-scripts/out}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
FSBENCH_FLAGS=${FSBENCH_FLAGS:-}
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
BEFORE_BIN=${BEFORE_BIN:-}
PY=${PY:-1}
PY_ITERS=${PY_ITERS:-$ITERS}
command -v python3 >/dev/null || { echo "bench-fs: no python3: the Python harness is skipped" >&2; PY=0; }

SCRATCH=$(mktemp -d "$SCRATCH_PARENT/mnemofs-bench.XXXXXX")
BIN=$SCRATCH/bin
LO_PID= NP_PID= MN_PID= MP_PID= L1_PID= MB_PID=

unmount_all() {
	for p in $MN_PID $MP_PID $LO_PID $NP_PID $L1_PID $MB_PID; do
		kill -0 "$p" 2>/dev/null || continue
		kill -TERM "$p" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
	for m in "$SCRATCH/lo-mnt" "$SCRATCH/np-mnt" "$SCRATCH/mn-mnt" "$SCRATCH/mp-mnt" "$SCRATCH/l1-mnt" "$SCRATCH/mb-mnt"; do
		unmount_if_mounted "$m"
	done
	for p in $MN_PID $MP_PID $LO_PID $NP_PID $L1_PID $MB_PID; do kill -KILL "$p" 2>/dev/null || true; done
	MN_PID= MP_PID= LO_PID= NP_PID= L1_PID= MB_PID=
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	unmount_all
	if [ "${KEEP:-0}" = 1 ]; then
		echo "bench-fs: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fstype=$(df -T "$SCRATCH" | awk 'NR==2 {print $2}')
[ "$fstype" = tmpfs ] && echo "bench-fs: warning: $SCRATCH is on tmpfs, not a disk; set SCRATCH_PARENT" >&2

echo "bench-fs: building into $BIN" >&2
mkdir -p "$BIN" "$SCRATCH/native" "$SCRATCH/lo-orig" "$SCRATCH/lo-mnt" "$SCRATCH/np-orig" "$SCRATCH/np-mnt" "$SCRATCH/mn-data" "$SCRATCH/mn-mnt" "$SCRATCH/mp-data" "$SCRATCH/mp-mnt" "$SCRATCH/l1-orig" "$SCRATCH/l1-mnt"
go build -o "$BIN/mnemofs" ./cmd/mnemofs
go build -o "$BIN/loopback" github.com/hanwen/go-fuse/v2/example/loopback
go build -o "$BIN/fsbench" ./scripts/fsbench


direct=
[ "$(id -u)" = 0 ] && direct=-directmount
"$BIN/loopback" $direct "$SCRATCH/lo-mnt" "$SCRATCH/lo-orig" >"$SCRATCH/loopback.log" 2>&1 &
LO_PID=$!
wait_for "$SCRATCH/loopback.log" "Mounted!" "$LO_PID"
"$BIN/fsbench" loopback -no-passthrough "$SCRATCH/np-mnt" "$SCRATCH/np-orig" >"$SCRATCH/loopback-nopt.log" 2>&1 &
NP_PID=$!
wait_for "$SCRATCH/loopback-nopt.log" "Mounted!" "$NP_PID"
GOMAXPROCS=1 "$BIN/loopback" $direct "$SCRATCH/l1-mnt" "$SCRATCH/l1-orig" >"$SCRATCH/loopback-1p.log" 2>&1 &
L1_PID=$!
wait_for "$SCRATCH/loopback-1p.log" "Mounted!" "$L1_PID"
"$BIN/mnemofs" mount --data "$SCRATCH/mn-data" "$SCRATCH/mn-mnt" >"$SCRATCH/mnemofs.log" 2>&1 &
MN_PID=$!
wait_for "$SCRATCH/mnemofs.log" "^mnemofs: mounted" "$MN_PID"
"$BIN/mnemofs" mount --no-passthrough --data "$SCRATCH/mp-data" "$SCRATCH/mp-mnt" >"$SCRATCH/mnemofs-nopt.log" 2>&1 &
MP_PID=$!
wait_for "$SCRATCH/mnemofs-nopt.log" "^mnemofs: mounted" "$MP_PID"

declare -A DIRS=([native]="$SCRATCH/native" [loopback]="$SCRATCH/lo-mnt" [loopback-nopt]="$SCRATCH/np-mnt" [mnemofs]="$SCRATCH/mn-mnt" [mnemofs-nopt]="$SCRATCH/mp-mnt" [loopback-1p]="$SCRATCH/l1-mnt")
declare -A PIDS=([native]=0 [loopback]="$LO_PID" [loopback-nopt]="$NP_PID" [mnemofs]="$MN_PID" [mnemofs-nopt]="$MP_PID" [loopback-1p]="$L1_PID")
ORDER=(native loopback loopback-nopt mnemofs mnemofs-nopt loopback-1p)
if [ -n "$BEFORE_BIN" ]; then
	mkdir -p "$SCRATCH/mb-data" "$SCRATCH/mb-mnt"
	"$BEFORE_BIN" mount --data "$SCRATCH/mb-data" "$SCRATCH/mb-mnt" >"$SCRATCH/mnemofs-before.log" 2>&1 &
	MB_PID=$!
	wait_for "$SCRATCH/mnemofs-before.log" "^mnemofs: mounted" "$MB_PID"
	DIRS[mnemofs-before]="$SCRATCH/mb-mnt"
	PIDS[mnemofs-before]="$MB_PID"
	ORDER+=(mnemofs-before)
fi
stamp=$(date +%Y%m%d-%H%M%S)
RES=$OUT/fs-$stamp
mkdir -p "$RES"
echo "bench-fs: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r); scratch on $fstype ($SCRATCH)" >&2
echo "bench-fs: $ROUNDS rounds, $ITERS iterations, $FILES-entry readdir, $SEQ_MIB MiB sequential" >&2
for r in $(seq "$ROUNDS"); do
	for i in "${!ORDER[@]}"; do
		t=${ORDER[$(((i + r - 1) % ${#ORDER[@]}))]}
		echo "bench-fs: round $r: $t" >&2
		# shellcheck disable=SC2086
		timeout -k 10 "$RUN_TIMEOUT" "$BIN/fsbench" -json -label "$t" -pid "${PIDS[$t]}" -n "$ITERS" -files "$FILES" \
			-seq-mib "$SEQ_MIB" $FSBENCH_FLAGS "${DIRS[$t]}" >"$RES/round$r-$t.json" ||
			die "fsbench on $t failed or hung for $RUN_TIMEOUT s (a FUSE request never answered?); logs: $SCRATCH/*.log (run with KEEP=1 to keep them)"
		grep -qF " ${DIRS[$t]} fuse" /proc/mounts || [ "$t" = native ] || die "$t is no longer mounted (see $SCRATCH/*.log)"
		if [ "$PY" = 1 ]; then
			echo "bench-fs: round $r: $t (python harness)" >&2
			timeout -k 10 "$RUN_TIMEOUT" python3 scripts/fsbench.py -label "$t" -n "$PY_ITERS" -files "$FILES" \
				-seq-mib "$SEQ_MIB" "${DIRS[$t]}" >"$RES/py-round$r-$t.json" ||
				die "fsbench.py on $t failed or hung for $RUN_TIMEOUT s; logs: $SCRATCH/*.log"
		fi
	done
done

{
	echo "## bench-fs $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r), scratch on $fstype."
	echo "Command: ROUNDS=$ROUNDS ITERS=$ITERS FILES=$FILES SEQ_MIB=$SEQ_MIB bash scripts/bench-fs.sh"
	echo "mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'); loopback = go-fuse $(go list -m -f '{{.Version}}' github.com/hanwen/go-fuse/v2) example/loopback (1 s TTLs; FUSE passthrough when root on Linux >= 6.9); loopback-nopt = the same without passthrough."
	"$BIN/fsbench" table "$RES"/round*.json
	if [ "$PY" = 1 ]; then
		echo
		echo "### The same rounds through the Python harness (scripts/fsbench.py: open/write/close of file objects, os.stat, os.listdir + os.lstat, os.replace, os.remove; PY_ITERS=$PY_ITERS)"
		echo
		"$BIN/fsbench" table "$RES"/py-round*.json
	fi
} | tee "$OUT/bench-fs-$stamp.md"
echo >&2
echo "bench-fs: table in $OUT/bench-fs-$stamp.md, raw JSON in $RES" >&2
