package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemofs/mnemofs/audit"
	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/control"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/report"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

var globals struct {
	data    string
	keyFile string
	backend string
}

// dataDir returns the absolute data directory.
func dataDir() (string, error) {
	d := globals.data
	if d == "" {
		d = os.Getenv("MNEMOFS_DATA")
	}
	if d == "" {
		base := os.Getenv("XDG_DATA_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fail("no home directory to put the data in: give --data DIR")
			}
			base = filepath.Join(home, ".local", "share")
		}
		d = filepath.Join(base, "mnemofs")
	}
	return filepath.Abs(d)
}

// encryptionKey reads the key (file or environment) and derives the
// 32-byte AES key of the store in dataDir from it (key.go); nil when
// encryption is off.
func encryptionKey(dataDir string) ([]byte, error) {
	raw, err := rawKey()
	if raw == nil || err != nil {
		return nil, err
	}
	p, fresh, err := storeKDF(dataDir)
	if err != nil {
		return nil, err
	}
	key, err := deriveKey(raw, p)
	if err == nil && fresh {
		err = saveKDF(dataDir, p) // before Badger creates DATA/db
	}
	return key, err
}

// keepIndex has eng keep its catalog and index across starts in dataDir
// (views.SetSnapshot), for a local store that is not encrypted: the index
// holds the words of every memory, which must not reach the disk in the
// clear when the store is encrypted. MNEMOFS_SNAPSHOT_EVERY (a duration)
// says how often a changing index is written again.
func keepIndex(eng *views.Engine, dataDir, user string, ro bool) {
	if globals.keyFile != "" || os.Getenv("MNEMOFS_ENCRYPTION_KEY") != "" {
		return
	}
	every, _ := time.ParseDuration(os.Getenv("MNEMOFS_SNAPSHOT_EVERY"))
	eng.SetSnapshot(views.SnapshotPath(dataDir, user), !ro, every)
}

// metaSources are the files of meta/ that packages other than views make
// from st (views.SetMetaSources).
func metaSources(st *store.Store) views.MetaSources {
	return views.MetaSources{
		Maintenance: func(may views.May) ([]byte, error) { return lifecycle.Log(st, may) },
		MCP:         func(may views.May) ([]byte, error) { return audit.Log(st, may) },
		Report:      func(may views.May) ([]byte, error) { return report.HTML(st, may, report.Options{}) },
	}
}

// rawKey is the key as given (file or environment); nil: none.
func rawKey() ([]byte, error) {
	switch {
	case globals.keyFile != "":
		return readKeyFile(globals.keyFile)
	case os.Getenv("MNEMOFS_ENCRYPTION_KEY") != "":
		return []byte(os.Getenv("MNEMOFS_ENCRYPTION_KEY")), nil
	}
	return nil, nil
}

// storeOpen says how openStore opens a store.
type storeOpen struct {
	user     string // the store's user (--user); "" for all
	notify   store.Notifier
	onChange func([]store.Change)
	// cacheBytes bounds the content cache (store.Options.CacheBytes).
	cacheBytes int64
	// readOnly: nothing at all is written.
	readOnly bool
	// bulk: a bulk load is coming (import), tune the KV for it.
	bulk bool
	// noCompactions: a short job that writes almost nothing (import
	// --index's build), not slowed by compactions (backend.Options).
	noCompactions bool
	// create: a store is made if there is none (mount, import); any
	// other command fails (storecheck.go).
	create bool
}

// openStore opens the store in dataDir, which the caller has locked.
func openStore(dataDir string, so storeOpen) (backend.KV, *store.Store, error) {
	logger := log.New(os.Stderr, "mnemofs: ", 0)
	kv, where, shared, err := openKV(dataDir, logger, backend.Options{Bulk: so.bulk, NoCompactions: so.noCompactions}, so.create)
	if err != nil {
		return nil, nil, err
	}
	opts := store.Options{Notify: so.notify, Reserved: reservedNames(), OnChange: so.onChange, Logger: logger, User: so.user,
		CacheBytes: so.cacheBytes, ReadOnly: so.readOnly,
		Operator: func() (policy.Operator, error) { return loadOperator(dataDir) }}
	if !shared {
		opts.SpaceDir = dataDir
		if globals.keyFile == "" && os.Getenv("MNEMOFS_ENCRYPTION_KEY") == "" {
			// Large files' content as plain files beside Badger; never
			// for an encrypted store, whose content must not reach the
			// disk, nor for a shared one, whose content is in etcd.
			opts.BlobDir = filepath.Join(dataDir, "blobs")
		}
	}
	st, err := store.Open(kv, opts)
	if errors.Is(err, store.ErrNoStore) {
		kv.Close()
		return nil, nil, fail("%s holds no store yet, and a read-only mount cannot create one: mount it once without --read-only", where)
	}
	if err != nil {
		kv.Close()
		return nil, nil, fmt.Errorf("opening the store in %s: %w", where, err)
	}
	return kv, st, nil
}

// run executes req where the store is: through the running mount when it
// holds the store, else by opening it here.
func run(req control.Request, p control.Progress, result any) error {
	dir, err := dataDir()
	if err != nil {
		return err
	}
	if _, err := rawKey(); err != nil {
		return err // a key file others may read: before anything else
	}
	if backendURL() == "" && !held(dir) {
		// Before the lock, which would make the directory: a mistyped
		// --data leaves nothing behind (storecheck.go). A store held by
		// a mount or mcp answers through it.
		if err := checkLocal(dir, req.Op == "import"); err != nil {
			return err
		}
	}
	lock, holder, err := control.Acquire(dir, control.Holder{Pid: os.Getpid(), Command: req.Op})
	if errors.Is(err, control.ErrBusy) {
		if holder != nil && holder.Socket != "" {
			err := control.Call(dir, holder.Socket, req, p, result)
			var foreign *control.ForeignServerError
			var remote *control.RemoteError
			if errors.As(err, &foreign) || errors.As(err, &remote) {
				return fail("%v", err)
			}
			return err
		}
		if holder != nil {
			return fail("the store in %s is busy: pid %d is running 'mnemofs %s'; try again when it has finished", dir, holder.Pid, holder.Command)
		}
		return fail("the store in %s is busy", dir)
	}
	if err != nil {
		return fmt.Errorf("locking the store in %s: %w", dir, err)
	}
	defer lock.Release()
	defer startProfile()() // MNEMOFS_CPUPROFILE: here too, for import's
	user := ""
	if req.Op == "report" || req.Op == "search" {
		// The store's own isolation, as a --user mount's: a search for
		// alice ranks in an index of what she may see (a user: filter
		// over the whole index alone would let the other lines of a log
		// she shares rank hers).
		user = req.User
	}
	var eng *views.Engine
	var onChange func([]store.Change)
	if req.Op == "search" || req.Op == "index" {
		eng = views.NewEngine(nil)
		keepIndex(eng, dir, user, false)
		onChange = eng.Handle
	}
	kv, st, err := openStore(dir, storeOpen{user: user, onChange: onChange, bulk: req.Op == "import", noCompactions: req.Op == "index", create: req.Op == "import"})
	if err != nil {
		return err
	}
	if req.Op == "index" && (!eng.KeepsSnapshot() || !st.Versioned()) {
		eng = nil // a store that keeps no snapshot: nothing to build now
	}
	if eng != nil {
		eng.Start(st)
	}
	res, rerr := control.Run(st, eng, req, p)
	if eng != nil {
		eng.Stop()
	}
	err = errors.Join(rerr, st.Close(), kv.Close())
	if err != nil {
		return err
	}
	// Round-trip through JSON so local and remote results look the same.
	b, err := json.Marshal(res)
	if err != nil || result == nil {
		return err
	}
	return json.Unmarshal(b, result)
}
