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
	if h, err := control.ReadHolder(data); err == nil && h.Socket != "" && h.Mountpoint == mnt {
		err := control.Call(data, h.Socket, control.Request{Op: "unmount"}, nil, nil)
		if _, still := mountedData(mnt); err == nil || !still {
			for i := 0; i < 200; i++ {
				if _, still := mountedData(mnt); !still {
					return awaitClose(mnt, data, h.Pid)
				}
				time.Sleep(50 * time.Millisecond)
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

// awaitClose waits, once mnt is unmounted, for the process pid serving it
// to close the store: it may first finish writing the index snapshot,
// which takes seconds at a million memories (and more on a slow disk),
// so this waits as long as that process lives.
func awaitClose(mnt, data string, pid int) error {
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
			fmt.Fprintf(os.Stderr, "mnemofs: %s is unmounted; waiting for process %d to close the store (it may be writing the index snapshot)\n", mnt, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mountedData returns the data dir (the source) of the mnemofs mount at mnt.
func mountedData(mnt string) (string, bool) {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return "", false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && unescapeMount(f[1]) == mnt && strings.Contains(f[2], "mnemofs") {
			return unescapeMount(f[0]), true
		}
	}
	return "", false
}

// unescapeMount undoes the octal escapes of /proc/mounts (\040 for space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
