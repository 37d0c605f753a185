#!/usr/bin/env bash
# expect-bugs.sh: runs the tests kept behind the `bugs` build tag (known
# product bugs, each a test that fails today) and checks that every one of
# them still fails. A bug test that passes, or skips, fails this script with
# its name: the bug is fixed (move the case back among the tests that run
# by default) or the test no longer tests it. .ci/run calls it.
#
#   bash scripts/expect-bugs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(grep -rl --include='*_test.go' '^//go:build bugs$' . | sort)
if [ ${#files[@]} -eq 0 ]; then
	echo "expect-bugs: no bugs-tagged tests" >&2
	exit 0
fi
bad=0
for f in "${files[@]}"; do
	pkg=./$(dirname "${f#./}")
	mapfile -t tests < <(sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' "$f")
	[ ${#tests[@]} -gt 0 ] || continue
	re="^($(IFS='|'; echo "${tests[*]}"))\$"
	out=$(go test -count=1 -tags bugs -run "$re" -v "$pkg" 2>&1 || true)
	for t in "${tests[@]}"; do
		# Leaves (subtests with no subtests of their own) and the test itself.
		if grep -qE "^\s*--- (PASS|SKIP): $t(/|\s)" <<<"$out"; then
			grep -E "^\s*--- (PASS|SKIP): $t(/|\s)" <<<"$out" | sed 's/^ */expect-bugs: now passes or skips (the bug is fixed? move it back): /' >&2
			bad=1
		fi
		if ! grep -qE "^--- FAIL: $t\s" <<<"$out"; then
			echo "expect-bugs: $t in $pkg did not fail" >&2
			bad=1
		else
			echo "expect-bugs: $t in $pkg fails, as expected: $(grep -cE "^\s*--- FAIL: $t/" <<<"$out") known bug case(s)" >&2
		fi
	done
done
exit $bad
