package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mnemofs/mnemofs/policy"
)

// The operator's host-local configuration: DATA/operator.yaml. It names the
// programs a maintenance pass may run (policy.Operator); nothing else can:
// not meta/policy.yaml, not a --user mount, not MCP, not another host of a
// shared store. Like sshd with its keys, mnemofs refuses the file unless
// only the operator could have written it: it and the data directory must
// belong to the user running mnemofs (or root) and be writable by no one
// else. It is read at every pass, so an edit needs no remount.

// operatorMax bounds operator.yaml.
const operatorMax = 1 << 20

// operatorFile is the path of the operator's configuration in data.
func operatorFile(data string) string { return filepath.Join(data, "operator.yaml") }

// loadOperator reads data's operator.yaml (none: nothing configured).
func loadOperator(data string) (policy.Operator, error) {
	p := operatorFile(data)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return policy.Operator{}, nil
	}
	if err != nil {
		return policy.Operator{}, err
	}
	defer f.Close()
	for _, c := range []struct {
		path string
		open *os.File
	}{{p, f}, {data, nil}} {
		var fi os.FileInfo
		if c.open != nil {
			fi, err = c.open.Stat()
		} else {
			fi, err = os.Stat(c.path)
		}
		if err != nil {
			return policy.Operator{}, err
		}
		if err := onlyOperator(c.path, fi); err != nil {
			return policy.Operator{}, fail("%v", err)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, operatorMax+1))
	if err != nil {
		return policy.Operator{}, err
	}
	if len(b) > operatorMax {
		return policy.Operator{}, fmt.Errorf("%s is over %d bytes", p, operatorMax)
	}
	o, err := policy.ParseOperator(b)
	if err != nil {
		return o, fail("%s: %v", p, err)
	}
	return o, nil
}

// onlyOperator refuses a file or directory that someone other than the
// user running mnemofs (or root) owns or may write.
func onlyOperator(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	me := uint32(os.Geteuid())
	if st.Uid != me && st.Uid != 0 {
		return fmt.Errorf("%s belongs to uid %d, not to the user running mnemofs (uid %d): refusing to run the commands it names", path, st.Uid, me)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by others (mode %o): refusing to run the commands it names; fix it with 'chmod go-w %s'", path, fi.Mode().Perm(), path)
	}
	return nil
}
