//go:build bugs

package fusefs

// Known product bugs found by the pjdfstest port (pjd_test.go). They fail
// today; run them with `go test -tags bugs -run TestPjdBugs ./fusefs/`.
// Move a case back to pjdErrCases once it is fixed.

import "testing"

var pjdBugCases = []pjdErrCase{
	// fillAttr splits a negative unix-ns time with truncating division,
	// so times before 1970 come back wrong: set {-2 s, 5e8 ns} (=-1.5 s),
	// stat gives {-1, 999999999}. ext4 keeps them.
	{"utimensat/before 1970", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(-2, 5e8), ts(-86400*365, 1), 0) }, 0,
		func(p pathFn) error { return wantTimes(p("f"), ts(-2, 5e8), ts(-86400*365, 1)) }},
	// Times are stored as int64 unix ns, which ends in 2262: a time in
	// 2400 overflows and silently becomes one in 1815. ext4 keeps times
	// to 2446; failing with EINVAL/EOVERFLOW would at least not corrupt.
	{"utimensat/year 2400", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(13569465600, 0), ts(13569465600, 9), 0) }, 0,
		func(p pathFn) error { return wantTimes(p("f"), ts(13569465600, 0), ts(13569465600, 9)) }},
}

func TestPjdBugs(t *testing.T) { runPjdErrCases(t, pjdBugCases) }
