package main

// What keeps a mount from going away. umount(2) of the mountpoint fails
// with EBUSY while a process has its working directory or a file open in
// it, or while something is mounted inside it; and it succeeds while the
// same filesystem is also mounted elsewhere (a bind mount of the mount or
// of a directory in it), but then the filesystem lives on there and the
// mount process never sees its end. unmount names each of these and how
// to release it, read from /proc (mountinfo, each process's cwd, root and
// fdinfo), without touching the mount's files.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	id     int
	dev    string // major:minor of the filesystem
	root   string // the directory of the filesystem mounted here
	point  string
	fstype string
}

// mountTable reads /proc/self/mountinfo.
func mountTable() []mountEntry {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []mountEntry
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 10 {
			continue
		}
		id, _ := strconv.Atoi(f[0])
		e := mountEntry{id: id, dev: f[2], root: unescapeMount(f[3]), point: unescapeMount(f[4])}
		for i, v := range f {
			if v == "-" && i+1 < len(f) {
				e.fstype = f[i+1]
				break
			}
		}
		out = append(out, e)
	}
	return out
}

// fsMounts is the filesystem mounted at mnt: its device and every mount
// of it (mnt's and any bind mount's), by id.
type fsMounts struct {
	mnt    string
	dev    string
	points map[int]string
}

// mountsOf finds the mounts of the filesystem mounted at mnt (ok false
// when nothing is).
func mountsOf(mnt string) (fsMounts, bool) {
	m := fsMounts{mnt: mnt, points: map[int]string{}}
	tab := mountTable()
	for i := len(tab) - 1; i >= 0; i-- { // the last one mounted there is what the path shows
		if tab[i].point == mnt {
			m.dev = tab[i].dev
			break
		}
	}
	if m.dev == "" {
		return m, false
	}
	for _, e := range tab {
		if e.dev == m.dev {
			m.points[e.id] = e.point
		}
	}
	return m, true
}

// holders describes what holds the filesystem: the other places it is
// mounted, mounts inside it, and the processes in it, one line each with
// how to release it. Processes are looked for by the mount ids of m (the
// mounts may have been detached since) and the paths they had.
func (m fsMounts) holders() []string {
	var out []string
	ids := make([]int, 0, len(m.points))
	for id := range m.points {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var paths []string
	for _, id := range ids {
		paths = append(paths, m.points[id])
	}
	tab := mountTable()
	for _, e := range tab {
		if e.dev == m.dev && e.point != m.mnt {
			what := "the mount"
			if e.root != "/" {
				what = "its directory " + filepath.Join(m.mnt, e.root)
			}
			out = append(out, fmt.Sprintf("%s is also mounted at %s (a bind mount of %s): release it with 'umount %s'", m.mnt, e.point, what, e.point))
		}
	}
	for _, e := range tab {
		if e.dev != m.dev && under(e.point, paths) {
			out = append(out, fmt.Sprintf("%s (%s) is mounted inside it: release it with 'umount %s'", e.point, e.fstype, e.point))
		}
	}
	return append(out, m.processes(paths)...)
}

// under reports whether p is one of dirs or below one of them.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// processes lists the processes with their working or root directory in
// the filesystem, or a file of it open, but this one and the mount's own.
func (m fsMounts) processes(paths []string) []string {
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := "/proc/" + e.Name()
		name := procName(dir)
		var why []string
		for _, link := range []string{"cwd", "root"} {
			if t, err := os.Readlink(dir + "/" + link); err == nil && under(t, paths) {
				if link == "cwd" {
					why = append(why, "has its working directory in "+t)
				} else {
					why = append(why, "has its root in "+t)
				}
			}
		}
		open := 0
		var first string
		fds, _ := os.ReadDir(dir + "/fdinfo")
		for _, fd := range fds {
			b, err := os.ReadFile(dir + "/fdinfo/" + fd.Name())
			if err != nil {
				continue
			}
			if _, ok := m.points[fdMount(b)]; ok {
				open++
				if first == "" {
					first, _ = os.Readlink(dir + "/fd/" + fd.Name())
				}
			}
		}
		switch {
		case open == 1:
			why = append(why, "has "+first+" open")
		case open > 1:
			why = append(why, fmt.Sprintf("has %d files open there (%s, ...)", open, first))
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("process %d (%s) %s", pid, name, strings.Join(why, " and ")))
		}
	}
	if len(out) > 0 {
		out[len(out)-1] += ": end it, or have it leave the mount (cd elsewhere, close the files)"
		if len(out) > 1 {
			out[len(out)-1] = strings.Replace(out[len(out)-1], "end it, or have it", "end them, or have them", 1)
		}
	}
	return out
}

// fdMount is the mnt_id of an fdinfo file.
func fdMount(b []byte) int {
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "mnt_id:"); ok {
			id, _ := strconv.Atoi(strings.TrimSpace(v))
			return id
		}
	}
	return -1
}

// procName is the command name of the process at dir (/proc/PID).
func procName(dir string) string {
	b, err := os.ReadFile(dir + "/comm")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
