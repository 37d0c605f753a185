#!/usr/bin/env bash
# fuzz.sh: runs every fuzz target of the project (front matter, log lines, queries,
# names, policy and operator files, redaction, names looked up in the mount's
# generated trees) for FUZZTIME each (default 5m), one worker at a time, and keeps what the fuzzer found interesting as
# seed corpus in <package>/testdata/fuzz/<target>/ (go test then replays it
# on every run). A failure stops the script with the fuzzer's report; the
# failing input is saved there by go test itself.
#
#   bash scripts/fuzz.sh                 # all targets, 5 minutes each
#   FUZZTIME=30s bash scripts/fuzz.sh    # a quick pass
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-5m}
targets=(
	"./memory FuzzParse"
	"./memory FuzzDecodeYAML"
	"./memory FuzzParseLine"
	"./views FuzzParseQuery"
	"./store FuzzNames"
	"./policy FuzzPolicy"
	"./policy FuzzOperator"
	"./fusefs FuzzViewNames"
	"./mcp FuzzParsePath"
	"./redact FuzzRedact"
)
cache=$(go env GOCACHE)/fuzz/github.com/mnemofs/mnemofs
for t in "${targets[@]}"; do
	set -- $t
	pkg=$1 name=$2
	echo "fuzz: $name in $pkg for $FUZZTIME" >&2
	start=$SECONDS
	log=$(mktemp)
	if ! go test -run XXX -fuzz "^$name\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 5s -parallel 1 "$pkg" >"$log" 2>&1; then
		grep -v '^fuzz: elapsed' "$log" | tail -40 >&2
		rm -f "$log"
		exit 1
	fi
	tail -3 "$log"
	rm -f "$log"
	src=$cache/${pkg#./}/$name
	if [ -d "$src" ]; then
		mkdir -p "$pkg/testdata/fuzz/$name"
		cp -n "$src"/* "$pkg/testdata/fuzz/$name/" 2>/dev/null || true
	fi
	echo "fuzz: $name clean after $((SECONDS - start)) s; corpus $(ls "$pkg/testdata/fuzz/$name" 2>/dev/null | wc -l) inputs" >&2
done
