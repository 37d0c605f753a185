#!/usr/bin/env bash
# bench-report.sh: how long the report page takes at 10k and 100k
# memories. For each size it writes N synthetic Markdown memories (front
# matter with a user of 8, tags of 50, a created day of 90 and related
# links: a chain and 100 hubs) as plain files, imports them, runs one
# maintenance pass, and times, RUNS times each:
#   - mnemofs report --out F with the store unmounted (opens Badger too),
#   - mnemofs report --out F through a running mount (the control socket),
#   - cat MNT/meta/report.html (the generated file, in the mount).
# It prints the median and the fastest of each, and the page's size.
#
#   bash scripts/bench-report.sh                 # from the repo root
#   SIZES="10000" RUNS=5 bash scripts/bench-report.sh
#
# Environment: SIZES ("10000 100000"), RUNS (3), SCRATCH_PARENT
# (/var/tmp), OUT (scripts/out), KEEP=1 keeps the scratch area.
set -euo pipefail

NAME=bench-report
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

SIZES=${SIZES:-"10000 100000"}
RUNS=${RUNS:-3}
OUT=${OUT:-scripts/out}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-report.XXXXXX")
MOUNT_PID=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ -n "$MOUNT_PID" ] && kill "$MOUNT_PID" 2>/dev/null && wait "$MOUNT_PID" 2>/dev/null
	unmount_if_mounted "$SCRATCH/mnt"
	if [ "${KEEP:-0}" = 1 ]; then
		echo "$NAME: kept $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$SCRATCH/bin" "$OUT"
BIN=$SCRATCH/bin/mnemofs
go build -o "$BIN" ./cmd/mnemofs

# gen DIR N: N memories under DIR in 5 trees.
gen() {
	for d in episodic/notes semantic/knowledge_base semantic/skills working/tasks projects/beta; do
		mkdir -p "$1/$d"
	done
	awk -v dir="$1" -v n="$2" 'BEGIN {
		split("episodic/notes semantic/knowledge_base semantic/skills working/tasks projects/beta", trees, " ")
		for (i = 0; i < n; i++) {
			p[i] = "/" trees[i % 5 + 1] "/m" sprintf("%06d", i) ".md"
			f = dir p[i]
			printf "---\nuser: u%d\ntags: [t%02d, t%02d]\ncreated: 2026-%02d-%02dT10:00:00Z\n", i % 8, i % 50, (i * 7) % 50, 9 + int((i % 90) / 30), 1 + i % 30 > f
			rel = ""
			if (i > 0 && i % 3 != 0) rel = "\"" p[i - 1] "\""
			if (i >= 100 && i % 2 == 0) rel = rel (rel == "" ? "" : ", ") "\"" p[i % 100] "\""
			if (rel != "") printf "related: [%s]\n", rel > f
			printf "---\nmemory %d: the agent noted a fact about project %d and user %d\n", i, i % 97, i % 8 > f
			close(f)
		}
	}'
}

# timeit CMD...: seconds, with output to /dev/null.
timeit() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$SCRATCH/err" || die "$* failed: $(cat "$SCRATCH/err")"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}

# stats: "median fastest" of the numbers on stdin.
stats() { sort -g | awk '{v[NR] = $1} END {printf "%.2f %.2f", v[int((NR + 1) / 2)], v[1]}'; }

stamp=$(date +%Y%m%d-%H%M%S)
{
	echo "## bench-report $stamp"
	echo
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r); shared and noisy."
	echo "Command: SIZES=\"$SIZES\" RUNS=$RUNS bash scripts/bench-report.sh (mnemofs $(git describe --always --dirty 2>/dev/null || echo '?'))"
	echo
	echo "| memories | page | report, unmounted (s) median / min | report, through the mount (s) | cat meta/report.html (s) |"
	echo "|---:|---:|---:|---:|---:|"
	for n in $SIZES; do
		rm -rf "$SCRATCH/src" "$SCRATCH/data" "$SCRATCH/mnt"
		mkdir -p "$SCRATCH/mnt"
		gen "$SCRATCH/src" "$n"
		"$BIN" --data "$SCRATCH/data" import "$SCRATCH/src" >/dev/null 2>&1
		"$BIN" --data "$SCRATCH/data" maintain --now "$(date -u -d '+2 days' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null
		a=$(for _ in $(seq "$RUNS"); do timeit "$BIN" --data "$SCRATCH/data" report --out "$SCRATCH/page.html"; done | stats)
		size=$(stat -c %s "$SCRATCH/page.html")
		"$BIN" --data "$SCRATCH/data" mount "$SCRATCH/mnt" >"$SCRATCH/mount.log" 2>&1 &
		MOUNT_PID=$!
		for _ in $(seq 600); do grep -qs "mounted" "$SCRATCH/mount.log" && break; sleep 0.1; done
		grep -q "mounted" "$SCRATCH/mount.log" || die "the mount did not come up: $(cat "$SCRATCH/mount.log")"
		b=$(for _ in $(seq "$RUNS"); do timeit "$BIN" --data "$SCRATCH/data" report --out "$SCRATCH/page.html"; done | stats)
		c=$(for _ in $(seq "$RUNS"); do timeit cat "$SCRATCH/mnt/meta/report.html"; done | stats)
		kill "$MOUNT_PID"
		wait "$MOUNT_PID" || true
		MOUNT_PID=
		unmount_if_mounted "$SCRATCH/mnt"
		echo "| $n | $((size / 1024)) KiB | ${a/ / \/ } | ${b/ / \/ } | ${c/ / \/ } |"
	done
} | tee "$OUT/bench-report-$stamp.md"
echo "$NAME: written to $OUT/bench-report-$stamp.md" >&2
