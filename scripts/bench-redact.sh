#!/usr/bin/env bash
# bench-redact.sh: write throughput through a real mount with redaction
# off, with every detector in index mode, and in store mode, in the same
# run (and off with --no-passthrough, "nopt": store mode turns passthrough
# off for the files it covers, so that is its share): for each mode a fresh store is mounted and N files of 1 KiB are
# written into semantic/ with bash's own printf (no process a file), one
# in ten holding an address, a key and a phone number; then a search
# waits until all are indexed. The modes take turns for ROUNDS rounds, so
# that the machine's load drifts over all of them alike; it prints each
# run and the median files/s per mode with its ratio to off.
#
#   bash scripts/bench-redact.sh              # N=2000 ROUNDS=3
#   N=500 ROUNDS=1 bash scripts/bench-redact.sh
set -euo pipefail

NAME=bench-redact
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
N=${N:-2000}
ROUNDS=${ROUNDS:-3}
SCRATCH=$(mktemp -d "${SCRATCH_PARENT:-/var/tmp}/mnemofs-redact.XXXXXX")
PID=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
	unmount_if_mounted "$SCRATCH/mnt"
	rm -rf "$SCRATCH"
}
trap cleanup EXIT INT TERM
go build -o "$SCRATCH/mnemofs" ./cmd/mnemofs
BIN=$SCRATCH/mnemofs

policy() {
	[ "$1" = off ] || [ "$1" = nopt ] && return 0
	echo "redact:"
	for d in email phone api_key card iban; do
		echo "  - {detector: $d, mode: $1}"
	done
}

words=$(printf 'the agent noted that the user prefers short answers about travel plans and budgets %.0s' $(seq 13))
words=${words:0:1024}
secret="mail bob@example.com key AKIAQWERTYUIOPASDFGH call +41 44 668 18 00 "
dirty="$secret${words:${#secret}}"

run() { # mode -> files/s
	local mode=$1 data=$SCRATCH/data-$1 mnt=$SCRATCH/mnt
	rm -rf "$data"
	mkdir -p "$data" "$mnt"
	policy "$mode" >"$SCRATCH/policy.yaml"
	"$BIN" policy set --data "$data" "$SCRATCH/policy.yaml" >/dev/null
	local flags=()
	[ "$mode" = nopt ] && flags=(--no-passthrough)
	"$BIN" mount --data "$data" "${flags[@]}" "$mnt" >"$SCRATCH/mount.log" 2>&1 &
	PID=$!
	for _ in $(seq 300); do grep -q "mounted" "$SCRATCH/mount.log" 2>/dev/null && break; sleep 0.1; done
	local t0 t1 i
	t0=$(date +%s.%N)
	for ((i = 0; i < N; i++)); do
		if ((i % 10 == 0)); then printf '%s' "$dirty" >"$mnt/semantic/m$i.md"; else printf '%s' "$words" >"$mnt/semantic/m$i.md"; fi
	done
	cat "$mnt/search/travel budgets/.results" >/dev/null # waits for the index
	t1=$(date +%s.%N)
	kill "$PID"
	wait "$PID" || true
	PID=
	echo "$N / ($t1 - $t0)" | bc -l
}

declare -A all
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in off nopt index store; do
		v=$(run "$mode")
		printf 'round %d %-5s %8.0f files/s\n' "$r" "$mode" "$v"
		all[$mode]+="$v "
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
off=$(echo "${all[off]}" | median)
for mode in off nopt index store; do
	m=$(echo "${all[$mode]}" | median)
	printf 'median %-5s %8.0f files/s  %.2f x off\n' "$mode" "$m" "$(echo "$m / $off" | bc -l)"
done
