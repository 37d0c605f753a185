package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/backup"
	"github.com/mnemofs/mnemofs/control"
	"github.com/mnemofs/mnemofs/store"
)

// Backup and restore. 'mnemofs backup FILE' writes one snapshot of the
// whole store (package backup) from the process that holds it: the
// running mount, through its control socket, else this one. 'mnemofs
// restore FILE' loads one into a new data directory. The index is not in
// a backup: it is derived, and the first mount of the restored store
// builds it.

func init() { control.Register("backup", backupOp) }

// backupDone is what a backup answers.
type backupDone struct {
	File  string `json:"file"`
	Keys  int64  `json:"keys"`
	Blobs int64  `json:"blobs"`
	Bytes int64  `json:"bytes"`
}

func backupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "write a backup of the whole store to FILE (memories, versions, trash, metadata, policy), consistent, while mounted too",
		Long: `Write a backup of the whole store to FILE: every memory, its versions,
the trash, the metadata, the policy and the embeddings, as of one moment.
With a mount running, the mount writes it (the store stays in use). An
encrypted store's backup is encrypted with the store's key. FILE is
replaced only once the new backup is complete. 'mnemofs restore FILE'
makes a new data directory of it.`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var res backupDone
			bar := newBar("backing up")
			err := run(control.Request{Op: "backup", Dest: abs(args[0])}, bar.progress, &res)
			bar.finish()
			if err != nil {
				return err
			}
			fmt.Printf("backed up %d keys and %d blob files to %s (%d bytes)\n", res.Keys, res.Blobs, res.File, res.Bytes)
			return nil
		},
	}
}

// backupOp writes the backup of st to req.Dest, in the process that holds
// the store (its globals are the ones the store was opened with).
func backupOp(st *store.Store, req control.Request, p control.Progress) (any, error) {
	if !filepath.IsAbs(req.Dest) {
		return nil, fmt.Errorf("backup: %q is not an absolute path", req.Dest)
	}
	data, err := dataDir()
	if err != nil {
		return nil, err
	}
	h := backup.Header{StoreFormat: store.Format, Created: time.Now().UTC(), Mnemofs: shortVersion(), Source: data}
	if u := backendURL(); u != "" {
		h.Source = u
	}
	key, kdf, err := storeKeyAndKDF(data)
	if err != nil {
		return nil, err
	}
	if key != nil {
		h.Encrypted = true
		if kdf != nil {
			h.KDF, _ = json.Marshal(kdf)
		}
	}
	f, err := os.CreateTemp(filepath.Dir(req.Dest), "."+filepath.Base(req.Dest)+".partial-*")
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	tmp := f.Name()
	res, err := writeBackup(st, f, h, key, p)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(tmp, req.Dest)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("backup to %s: %w", req.Dest, err)
	}
	syncDir(filepath.Dir(req.Dest))
	res.File = req.Dest
	if fi, err := os.Stat(req.Dest); err == nil {
		res.Bytes = fi.Size()
	}
	return res, nil
}

func writeBackup(st *store.Store, f *os.File, h backup.Header, key []byte, p control.Progress) (backupDone, error) {
	w, err := backup.NewWriter(f, h, key)
	if err != nil {
		return backupDone{}, err
	}
	var n int64
	err = st.Dump(func(k, v []byte) error {
		if n++; n%8192 == 0 {
			p(n, 0)
		}
		return w.Key(k, v)
	}, func(ino, gen uint64, size int64, blob *os.File) error {
		return w.Blob(ino, gen, size, blob)
	})
	if err == nil {
		err = w.Close()
	}
	keys, blobs := w.Counts()
	return backupDone{Keys: keys, Blobs: blobs}, err
}

// storeKeyAndKDF is the 32-byte key of the encrypted store this process
// opens, and its derivation (nil for a store made before kdf.json); nil,
// nil when no key is given.
func storeKeyAndKDF(data string) ([]byte, *kdfParams, error) {
	raw, err := rawKey()
	if raw == nil || err != nil {
		return nil, nil, err
	}
	var p *kdfParams
	if u := backendURL(); u != "" {
		o, err := parseBackend(u)
		if err != nil {
			return nil, nil, err
		}
		if err := etcdAuth(&o); err != nil {
			return nil, nil, err
		}
		if p, err = sharedKDF(o); err != nil {
			return nil, nil, err
		}
	} else if p, _, err = storeKDF(data); err != nil {
		return nil, nil, err
	}
	key, err := deriveKey(raw, p)
	return key, p, err
}

func restoreCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "restore FILE [--data NEWDIR]",
		Short: "make a new data directory (--data) of a backup",
		Long: `Make a new store of a backup written by 'mnemofs backup': the data
directory (--data, MNEMOFS_DATA, else the default) must not exist or be
empty; nothing is written there until the whole backup has been read and
checked. A backup of an encrypted store needs its key
(--encryption-key-file). The store is checked (fsck) once restored; its
search index is built by the first mount.`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if backendURL() != "" {
				return fail("restore makes a local store in a data directory: leave out --backend (to move a restored store onto etcd, see docs/operations.md)")
			}
			data, err := dataDir()
			if err != nil {
				return err
			}
			if err := restore(args[0], data); err != nil {
				return err
			}
			globals.data = data
			var r store.FsckReport
			if err := run(control.Request{Op: "fsck"}, nil, &r); err != nil {
				return fmt.Errorf("restored into %s, but it does not open: %w", data, err)
			}
			for _, p := range r.Problems {
				fmt.Println("problem:", p)
			}
			if !r.Clean {
				return fail("restored into %s; fsck found %d problems ('mnemofs fsck --repair --data %s' fixes what it can)", data, len(r.Problems), data)
			}
			fmt.Printf("restored into %s: %d inodes, %d entries, consistent\n", data, r.Inodes, r.Entries)
			return nil
		},
	}
}

// restore loads the backup in file into a new data directory data.
func restore(file, data string) error {
	if ents, err := os.ReadDir(data); err == nil && len(ents) > 0 {
		return fail("%s is not empty: restore makes a new store, give a new --data DIR (the store there is left as it is)", data)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail("%s: %v", data, err)
	}
	in, err := os.Open(file)
	if err != nil {
		return fail("cannot read the backup: %v", err)
	}
	defer in.Close()
	r, err := backup.Open(in)
	if err != nil {
		return fail("%s: %v", file, err)
	}
	defer r.Close()
	h := r.Header
	if h.StoreFormat != store.Format {
		return fail("%s is a backup of a store of format %d, and this mnemofs makes format %d: restore it with mnemofs %s or a newer one", file, h.StoreFormat, store.Format, h.Mnemofs)
	}
	var key []byte
	var kdf *kdfParams
	if h.Encrypted {
		raw, err := rawKey()
		if err != nil {
			return err
		}
		if raw == nil {
			return fail("%s is the backup of an encrypted store: give its key with --encryption-key-file (or MNEMOFS_ENCRYPTION_KEY)", file)
		}
		if len(h.KDF) > 0 {
			kdf = &kdfParams{}
			if err := json.Unmarshal(h.KDF, kdf); err != nil {
				return fail("%s: %v", file, backup.ErrCorrupt)
			}
			if err := kdf.check(); err != nil {
				return err
			}
		}
		if key, err = deriveKey(raw, kdf); err != nil {
			return err
		}
		if err := r.Unlock(key); err != nil {
			return fail("%s: %v", file, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(data), 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(data), "."+filepath.Base(data)+".restoring-")
	if err != nil {
		return err
	}
	if err := load(r, tmp, key, kdf); err != nil {
		os.RemoveAll(tmp)
		if errors.Is(err, backup.ErrCorrupt) || errors.Is(err, backup.ErrKey) {
			return fail("%s: %v: nothing was restored", file, err)
		}
		return fmt.Errorf("restoring %s: %w (nothing was restored)", file, err)
	}
	if ents, err := os.ReadDir(data); err == nil && len(ents) > 0 {
		os.RemoveAll(tmp)
		return fail("%s was filled while restoring: the restore is left undone", data)
	}
	if err := os.Rename(tmp, data); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	syncDir(filepath.Dir(data))
	return nil
}

// load writes what r holds into a store in dir.
func load(r *backup.Reader, dir string, key []byte, kdf *kdfParams) error {
	if kdf != nil {
		if err := saveKDF(dir, kdf); err != nil { // before Badger creates DATA/db
			return err
		}
	}
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{EncryptionKey: key, Bulk: true})
	if err != nil {
		return err
	}
	blobs := filepath.Join(dir, "blobs")
	if key != nil {
		blobs = "" // an encrypted store keeps no content outside Badger
	}
	l := store.NewLoader(kv, blobs)
	bar := newBar("restoring")
	var n int64
	for err == nil {
		var rec backup.Record
		rec, err = r.Next()
		switch {
		case err != nil:
		case rec.Blob:
			err = l.Blob(rec.Ino, rec.Gen, rec.Content)
		default:
			err = l.Key(rec.Key, rec.Value)
		}
		if n++; n%8192 == 0 {
			bar.progress(n, 0)
		}
	}
	bar.finish()
	if err == io.EOF {
		err = l.Close()
	} else {
		l.Cancel()
	}
	if err == nil {
		err = kv.Sync()
	}
	return errors.Join(err, kv.Close())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// shortVersion is the version line's version.
func shortVersion() string {
	v, _, _ := strings.Cut(strings.TrimPrefix(versionText(), "mnemofs "), "\n")
	return v
}
