#!/usr/bin/env bash
# bench-maintain.sh: a maintenance pass over N memories (100k) inside a
# real mount, and the latency of a small write+read through the mount
# before and during the pass (goal: the pass under 30 s, and no stall).
#
#   bash scripts/bench-maintain.sh            # from the repo root
#   N=20000 bash scripts/bench-maintain.sh    # smaller
#
# Steps: `soak -gen` writes the tree (a tenth idle scratchpads, a tenth cold
# low-importance sessions, the rest notes with many duplicates); `mnemofs
# import` loads it; `mnemofs mount` mounts it; `soak -probe` writes and
# reads back a file every millisecond for 10 s idle, then again while
# `mnemofs maintain --now <31 days on>` runs through the mount's control
# socket; a second pass and `mnemofs fsck` follow.
set -euo pipefail

NAME=bench-maintain
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

N=${N:-100000}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-maint.XXXXXX")
MNT=$SCRATCH/mnt
DATA=$SCRATCH/data
MPID=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [ -n "$MPID" ]; then kill "$MPID" 2>/dev/null && wait "$MPID" 2>/dev/null || true; fi
	unmount_if_mounted "$MNT"
	rm -rf "$SCRATCH"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$MNT"
go build -o "$SCRATCH/bin/mnemofs" ./cmd/mnemofs
go build -o "$SCRATCH/bin/soak" ./scripts/soak
M=$SCRATCH/bin/mnemofs

echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r); N=$N; mnemofs $(git describe --always --dirty 2>/dev/null || echo '?')"
"$SCRATCH/bin/soak" -gen "$SCRATCH/src" -pass "$N"
/usr/bin/time -o "$SCRATCH/import.time" -f "import: %e s" "$M" import --data "$DATA" "$SCRATCH/src" >/dev/null 2>&1
cat "$SCRATCH/import.time"
"$M" mount --data "$DATA" "$MNT" >"$SCRATCH/mount.log" 2>&1 &
MPID=$!
for _ in $(seq 200); do grep -qF " $MNT fuse" /proc/mounts && break; sleep 0.1; done
grep -qF " $MNT fuse" /proc/mounts || die "the mount did not come up: $(cat "$SCRATCH/mount.log")"
ls "$MNT/search/warm up" >/dev/null # wait for the index to be built

printf 'write+read through the mount, idle:        '
"$SCRATCH/bin/soak" -probe "$MNT/semantic/probe-idle" -for 10s

later=$(date -u -d '+31 days' +%Y-%m-%dT%H:%M:%SZ)
"$SCRATCH/bin/soak" -probe "$MNT/semantic/probe-pass" >"$SCRATCH/probe.out" &
PPID_=$!
sleep 1
start=$(date +%s.%N)
"$M" maintain --data "$DATA" --now "$later" --json >"$SCRATCH/pass.json"
end=$(date +%s.%N)
sleep 1
kill -INT $PPID_
wait $PPID_
printf 'write+read through the mount, during pass: '
cat "$SCRATCH/probe.out"
python3 - "$SCRATCH/pass.json" "$start" "$end" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
kinds = collections.Counter(a["kind"] for a in r["actions"])
print(f"pass (through the mount): {len(r['actions'])} actions {dict(kinds)}, {len(r['errors'])} errors, {float(sys.argv[3]) - float(sys.argv[2]):.1f} s")
for e in r["errors"][:5]:
    print("  error:", e)
PY
start=$(date +%s.%N)
n=$("$M" maintain --data "$DATA" --now "$later" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["actions"]))')
end=$(date +%s.%N)
python3 -c "print(f'second pass: $n actions, {$end - $start:.1f} s')"
"$M" fsck --data "$DATA" | tail -1
"$M" stats --data "$DATA" --json >"$SCRATCH/stats.json"
python3 - "$SCRATCH/stats.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["archive_packs"]
print(f"archive packs: {p['files']} files in {p['packs']} packs, {p['raw_bytes']} bytes stored as {p['compressed_bytes']} ({p['compressed_bytes'] / max(p['raw_bytes'], 1):.2f} per byte)")
PY
