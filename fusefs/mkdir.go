package fusefs

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// inMkdir reports whether the caller of a request is in mkdir(2) or
// mkdirat(2), read from /proc/<tid>/syscall (the number of the system
// call a blocked thread is in). A FUSE lookup carries no intent, and the
// kernel answers mkdir of a name its lookup found with EEXIST before
// asking the filesystem: search/ answers the lookup of a mkdir with
// ENOENT, so that the MKDIR that follows makes the query. Reading the
// file needs the right to trace the caller (the mount's own user without
// Yama's ptrace_scope, or root): without it this says false, and mkdir
// answers EEXIST as before (mkdir -p works either way).
func inMkdir(ctx context.Context) bool {
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Pid == 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", c.Pid))
	if err != nil {
		return false
	}
	nr, _, _ := strings.Cut(string(b), " ")
	n, err := strconv.Atoi(nr)
	return err == nil && mkdirCalls[n]
}
