package fusefs

import "syscall"

// mkdirCalls are the system calls that make a directory.
var mkdirCalls = map[int]bool{syscall.SYS_MKDIR: true, syscall.SYS_MKDIRAT: true}
