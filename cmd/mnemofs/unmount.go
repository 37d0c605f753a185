package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/control"
)

func unmountCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unmount MOUNTPOINT",
		Short: "unmount a mounted store and wait for it to close",
		Args:  exactArgs(1, "MOUNTPOINT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return unmountPath(args[0])
		},
	}
}

// unmountPath asks the mount serving mnt to stop, found through the data
// dir it names in /proc/mounts; without one it unmounts directly.
func unmountPath(p string) error {
	mnt, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	data, ok := mountedData(mnt)
	if !ok {
		return fail("%s is not a mnemofs mount", mnt)
	}
	fm, _ := mountsOf(mnt)
	if h, err := control.ReadHolder(data); err == nil && h.Socket != "" && h.Mountpoint == mnt {
		// What would keep it (holders.go): said, and nothing done.
		if hs := fm.holders(); len(hs) > 0 {
			return fail("%s is in use, so it stays mounted: %s; then run 'mnemofs unmount %s' again", mnt, strings.Join(hs, "; "), mnt)
		}
		err := control.Call(data, h.Socket, control.Request{Op: "unmount"}, nil, nil)
		if _, still := mountedData(mnt); err == nil || !still {
			for i := 0; i < 200; i++ {
				if _, still := mountedData(mnt); !still {
					return awaitClose(fm, data, h.Pid)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if hs := fm.holders(); len(hs) > 0 {
				return fail("%s did not unmount within 10 s: %s", mnt, strings.Join(hs, "; "))
			}
			return fail("%s did not unmount within 10 s: is a shell or program still using it?", mnt)
		}
	}
	// The serving process is gone (killed): clear the dead mount.
	if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
		if out, ferr := exec.Command("fusermount3", "-uz", mnt).CombinedOutput(); ferr != nil {
			return fail("cannot unmount %s: %v %s", mnt, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// awaitClose waits, once fm.mnt is unmounted, for the process pid serving
// it to close the store: it may first finish writing the index snapshot,
// which takes seconds at a million memories (and more on a slow disk),
// so this waits as long as that process lives. When something still
// holds the filesystem (a bind mount made since, a file opened since), it
// says what.
func awaitClose(fm fsMounts, data string, pid int) error {
	mnt := fm.mnt
	for i := 0; ; i++ {
		if l, _, err := control.Acquire(data, control.Holder{Pid: os.Getpid(), Command: "unmount"}); err == nil {
			l.Release()
			return nil
		}
		if pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			return nil // gone: its lock went with it
		}
		if pid <= 0 && i == 200 {
			return fail("%s is unmounted, but its store was not closed within 10 s", mnt)
		}
		if i == 40 {
			if hs := fm.holders(); len(hs) > 0 {
				fmt.Fprintf(os.Stderr, "mnemofs: %s is unmounted, but the store stays open while %s\n", mnt, strings.Join(hs, "; "))
			} else {
				fmt.Fprintf(os.Stderr, "mnemofs: %s is unmounted; waiting for process %d to close the store (it may be writing the index snapshot)\n", mnt, pid)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sayHolders tells, when the filesystem of fm has not ended a moment after
// its unmount began, what keeps it (and so this process) alive.
func sayHolders(fm fsMounts, ended <-chan struct{}) {
	select {
	case <-ended:
		return
	case <-time.After(2 * time.Second):
	}
	if fm.dev == "" {
		return
	}
	if hs := fm.holders(); len(hs) > 0 {
		fmt.Fprintf(os.Stderr, "mnemofs: %s cannot end yet, the store stays open: %s\n", fm.mnt, strings.Join(hs, "; "))
	}
}
