package e2e

// The writer side of TestCrashSIGKILLKeepsFsyncedFiles: a child process
// that writes, fsyncs and records files until the mount dies under it.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// writerEnv makes the test binary run crashWriter instead of the tests.
const writerEnv = "MNEMOFS_E2E_CRASH_WRITER"

// writerDirs are where the writer's goroutines create files, one each.
var writerDirs = []string{"working/crash", "semantic/crash", "episodic/crash/sessions", "crash/deep/dir"}

// crashWriter is the child process: env MNEMOFS_E2E_CRASH_WRITER is
// "MNT|MANIFEST|ROUND|SEED". It writes files until the mount dies, and after
// each file's and its directory's fsync returned it appends "SHA256 PATH" to
// the manifest and fsyncs it. It prints "recorded" after the first entry.
func crashWriter() int {
	f := strings.Split(os.Getenv(writerEnv), "|")
	if len(f) != 4 {
		fmt.Fprintln(os.Stderr, "bad", writerEnv)
		return 2
	}
	mnt, manifest := f[0], f[1]
	round, _ := strconv.Atoi(f[2])
	seed, _ := strconv.ParseUint(f[3], 10, 64)
	mf, err := os.OpenFile(manifest, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var mu sync.Mutex
	var first sync.Once
	errc := make(chan error, len(writerDirs))
	for w, d := range writerDirs {
		go func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			dir := filepath.Join(mnt, d)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				errc <- err
				return
			}
			for p := dir; p != mnt; p = filepath.Dir(p) {
				if err := fsyncPath(filepath.Dir(p)); err != nil {
					errc <- err
					return
				}
			}
			record := func(sums, name string) {
				mu.Lock()
				_, err := fmt.Fprintf(mf, "%s %s\n", sums, filepath.Join(d, name))
				if err == nil {
					err = mf.Sync()
				}
				mu.Unlock()
				if err != nil {
					fmt.Fprintln(os.Stderr, "manifest:", err)
					os.Exit(2)
				}
			}
			var big []byte // the last large file, updated now and then
			var bigName string
			for n := 0; ; n++ {
				if big != nil && n%5 == 4 {
					// Old or new content until the fsync returns, the
					// new one after.
					data, apply := planUpdate(rng, big)
					record(sha(big)+"|"+sha(data), bigName)
					if err := apply(filepath.Join(dir, bigName)); err != nil {
						errc <- fmt.Errorf("%s: %w", bigName, err)
						return
					}
					big = data
					record(sha(data), bigName)
					continue
				}
				name := fmt.Sprintf("r%02d-w%d-%04d.bin", round, w, n)
				sum, data, err := writeDurable(rng, dir, name, n%2 == 1)
				if err != nil {
					errc <- fmt.Errorf("%s: %w", name, err)
					return
				}
				record(sum, name)
				if len(data) > 32<<10 {
					big, bigName = data, name
				}
				first.Do(func() { fmt.Println("recorded") })
				// A pause keeps the store small enough for 20 rounds to
				// stay quick; with 4 writers an fsync is still often in
				// flight when the kill comes.
				time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
			}
		}()
	}
	err = <-errc // the first failure: normally ENOTCONN once the mount is killed
	fmt.Fprintln(os.Stderr, "writer stopped:", err)
	return 3
}

// writeDurable writes a random file (directly, or as NAME.tmp renamed over
// NAME), fsyncs it and its directory, and returns its sha256.
func writeDurable(rng *rand.Rand, dir, name string, viaRename bool) (string, []byte, error) {
	size := rng.IntN(4 << 10) // mostly small; some span several chunks
	switch rng.IntN(128) {
	case 0, 1, 2, 3:
		size = 128<<10 + rng.IntN(256<<10)
	case 4:
		// Past one etcd transaction and the spill threshold: a rewrite
		// of it is staged (store/stage.go).
		size = 2<<20 + rng.IntN(512<<10)
	}
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	final := filepath.Join(dir, name)
	p := final
	if viaRename {
		p = final + ".tmp"
	}
	fd, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, err
	}
	// Write out of order: the second half first, then the first.
	half := size / 2
	if _, err = fd.WriteAt(data[half:], int64(half)); err == nil {
		for off := 0; off < half && err == nil; {
			k := min(half-off, 1+rng.IntN(32<<10))
			_, err = fd.WriteAt(data[off:off+k], int64(off))
			off += k
		}
	}
	if err == nil {
		err = fd.Sync()
	}
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	if err == nil && viaRename {
		err = os.Rename(p, final)
	}
	if err == nil {
		err = fsyncPath(dir)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:]), data, err
}

// planUpdate plans a change to a large file written before: an append, or
// an overwrite in its middle (which mnemofs makes copy on write). It
// returns the new content and the step that writes and fsyncs it.
func planUpdate(rng *rand.Rand, old []byte) ([]byte, func(path string) error) {
	n := 1 + rng.IntN(40<<10)
	kind := rng.IntN(4)
	if kind == 3 {
		n = len(old) // every byte written over, in one open
	}
	patch := make([]byte, n)
	for i := range patch {
		patch[i] = byte(rng.Uint32())
	}
	flags, off := os.O_WRONLY|os.O_APPEND, int64(-1)
	data := append(slices.Clip(old), patch...)
	switch kind {
	case 3:
		flags, off, data = os.O_WRONLY, 0, patch
	case 0, 1:
		flags = os.O_WRONLY
		off = int64(rng.IntN(len(old) - min(len(old)-1, len(patch))))
		data = slices.Clone(old)
		copy(data[off:], patch)
		if int(off)+len(patch) > len(data) {
			data = append(data[:off], patch...)
		}
	}
	return data, func(path string) error {
		fd, err := os.OpenFile(path, flags, 0)
		if err != nil {
			return err
		}
		if off < 0 {
			_, err = fd.Write(patch)
		} else {
			_, err = fd.WriteAt(patch, off)
		}
		if err == nil {
			err = fd.Sync()
		}
		return errors.Join(err, fd.Close())
	}
}

func fsyncPath(p string) error {
	d, err := os.Open(p)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
