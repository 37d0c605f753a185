//go:build bugs

package fusefs

// Known product bugs found by the pjdfstest port (pjd_test.go). They fail
// today; run them with `go test -tags bugs -run TestPjdBugs ./fusefs/`.
// CI (scripts/expect-bugs.sh) checks that each still fails.
// Move a case back to pjdErrCases once it is fixed.

import "testing"

var pjdBugCases = []pjdErrCase{
	// Times are stored as int64 unix ns, which ends in 2262: a time in
	// 2400 is refused with EOVERFLOW (it once wrapped silently to 1815).
	// ext4 keeps times to 2446, so this case still differs from it.
	{"utimensat/year 2400", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(13569465600, 0), ts(13569465600, 9), 0) }, 0,
		func(p pathFn) error { return wantTimes(p("f"), ts(13569465600, 0), ts(13569465600, 9)) }},
}

func TestPjdBugs(t *testing.T) { runPjdErrCases(t, pjdBugCases) }
