#!/usr/bin/env bash
# bench-etcd.sh: what the store on etcd costs against the store on Badger,
# measured in the same rounds, and how fast a change reaches another host.
#
#   bash scripts/bench-etcd.sh                 # from the repo root
#   ROUNDS=1 ITERS=200 SEQ_MIB=8 bash scripts/bench-etcd.sh   # quick
#
# It starts a 3-member etcd cluster on loopback (Debian's etcd-server:
# /usr/bin/etcd, or MNEMOFS_ETCD), data on disk under the scratch area,
# and mounts:
#   mnemofs        a fresh Badger store (the default)
#   mnemofs-etcd   host A of a store on the cluster (--backend etcd://...)
# plus host B of the same etcd store, with its own data directory. fsbench
# (scripts/fsbench) runs ROUNDS times against mnemofs and mnemofs-etcd in
# rotating order; then a Python probe writes VIS files on A (open, write,
# close), polling B until each reads back whole, and reports the p50/p95
# of that delay, and the same for B's by-tag/ view and search/.
#
# Environment: ROUNDS (3), ITERS (500), FILES (500), SEQ_MIB (16), VIS
# (200), SCRATCH_PARENT (/var/tmp), OUT (scripts/out), KEEP=1 keeps the
# scratch area.
set -euo pipefail

NAME=bench-etcd
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-500}
FILES=${FILES:-500}
SEQ_MIB=${SEQ_MIB:-16}
VIS=${VIS:-200}
OUT=${OUT:-scripts/out}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
command -v python3 >/dev/null || die "python3 is needed for the visibility probe"

SCRATCH=$(mktemp -d "$SCRATCH_PARENT/mnemofs-bench-etcd.XXXXXX")
BIN=$SCRATCH/bin
PIDS=()
MNTS=("$SCRATCH/mn-mnt" "$SCRATCH/ea-mnt" "$SCRATCH/eb-mnt")
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	sleep 1
	for m in "${MNTS[@]}"; do unmount_if_mounted "$m"; done
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	etcd_stop
	wait 2>/dev/null || true
	if [ "${KEEP:-0}" = 1 ]; then echo "$NAME: kept $SCRATCH" >&2; else rm -rf "$SCRATCH"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$BIN" "${MNTS[@]}" "$SCRATCH/mn-data" "$SCRATCH/ea-data" "$SCRATCH/eb-data"
go build -o "$BIN/mnemofs" ./cmd/mnemofs
go build -o "$BIN/fsbench" ./scripts/fsbench

etcd_start "$SCRATCH"
BACKEND="etcd://$ETCD_EPS/bench"

mount_one() { # LABEL DATA MNT [ARGS...]
	local label=$1 data=$2 mnt=$3
	shift 3
	"$BIN/mnemofs" "$@" --data "$data" mount "$mnt" >"$SCRATCH/$label.log" 2>&1 &
	PIDS+=($!)
	LAST=$!
	wait_for "$SCRATCH/$label.log" "^mnemofs: mounted" "$LAST"
}
mount_one mnemofs "$SCRATCH/mn-data" "$SCRATCH/mn-mnt"
MN=$LAST
mount_one mnemofs-etcd "$SCRATCH/ea-data" "$SCRATCH/ea-mnt" --backend "$BACKEND"
EA=$LAST
mount_one host-b "$SCRATCH/eb-data" "$SCRATCH/eb-mnt" --backend "$BACKEND"

declare -A DIRS=([mnemofs]="$SCRATCH/mn-mnt" [mnemofs-etcd]="$SCRATCH/ea-mnt")
declare -A DPID=([mnemofs]="$MN" [mnemofs-etcd]="$EA")
ORDER=(mnemofs mnemofs-etcd)
stamp=$(date +%Y%m%d-%H%M%S)
RES=$OUT/etcd-$stamp
mkdir -p "$RES"
for r in $(seq "$ROUNDS"); do
	for i in "${!ORDER[@]}"; do
		t=${ORDER[$(((i + r - 1) % ${#ORDER[@]}))]}
		echo "$NAME: round $r: $t" >&2
		"$BIN/fsbench" -json -label "$t" -pid "${DPID[$t]}" -n "$ITERS" -files "$FILES" -seq-mib "$SEQ_MIB" \
			"${DIRS[$t]}/working" >"$RES/round$r-$t.json"
	done
done

echo "$NAME: visibility probe ($VIS files)" >&2
python3 - "$SCRATCH/ea-mnt" "$SCRATCH/eb-mnt" "$VIS" >"$RES/visibility.txt" <<'PY'
import os, sys, time
a, b, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(os.path.join(a, "semantic", "vis"), exist_ok=True)
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]
def wait(cond, limit=10.0):
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > limit:
            return None
        time.sleep(0.001)
    return time.perf_counter() - t0
def reads(p, want):
    try:
        with open(p, "rb") as f:
            return f.read() == want
    except OSError:
        return False
files, views, search = [], [], []
for i in range(n):
    body = ("---\ntags: [vis%d]\n---\nthe visibility probe number quux%d\n" % (i, i)).encode()
    with open(os.path.join(a, "semantic", "vis", "f%d.md" % i), "wb") as f:
        f.write(body)
    t0 = time.perf_counter()
    d = wait(lambda: reads(os.path.join(b, "semantic", "vis", "f%d.md" % i), body))
    files.append(d if d is not None else float("inf"))
    d = wait(lambda: os.path.exists(os.path.join(b, "by-tag", "vis%d" % i, "semantic", "vis", "f%d.md" % i)))
    views.append(time.perf_counter() - t0 if d is not None else float("inf"))
    if i % 10 == 0:
        d = wait(lambda: any(e.endswith("f%d.md" % i) for e in os.listdir(os.path.join(b, "search", "quux%d" % i))))
        search.append(time.perf_counter() - t0 if d is not None else float("inf"))
ms = lambda x: "%.1f ms" % (x * 1000)
print("| what reaches host B, after the close on host A | p50 | p95 | max | n |")
print("|---|---|---|---|---|")
for name, xs in (("the file, read whole", files), ("its by-tag/ view entry", views), ("its search/ result", search)):
    print("| %s | %s | %s | %s | %d |" % (name, ms(pct(xs, .5)), ms(pct(xs, .95)), ms(max(xs)), len(xs)))
print()
print("Slowest probes (file number: ms): views %s; search %s" % (
    ", ".join("%d: %.0f" % (i, views[i] * 1000) for i in sorted(range(len(views)), key=lambda i: -views[i])[:3]),
    ", ".join("%d: %.0f" % (10 * i, search[i] * 1000) for i in sorted(range(len(search)), key=lambda i: -search[i])[:3])))
PY

{
	echo "## bench-etcd $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)."
	echo "Command: ROUNDS=$ROUNDS ITERS=$ITERS FILES=$FILES SEQ_MIB=$SEQ_MIB VIS=$VIS bash scripts/bench-etcd.sh"
	echo "mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'); etcd $ETCD_VERSION, 3 members on loopback, one machine (every member, both mounts and the benchmark share the 2 CPUs)."
	echo
	"$BIN/fsbench" table "$RES"/round*.json
	echo
	cat "$RES/visibility.txt"
} | tee "$OUT/bench-etcd-$stamp.md"
