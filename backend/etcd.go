package backend

// The KV on etcd v3 (go.etcd.io/etcd/client/v3), for a store shared by
// several hosts. Design:
//
// Layout. Every key lives under the store's prefix P, so that several
// stores share one cluster: P/k/<key> holds the KV's key <key>; P/x/enc
// is the encryption check (etcd_crypt.go); P/x/txn/<client>/<slot> are the
// commit markers of one open client (below), deleted at Close.
//
// View reads at one revision: the first read is linearizable and pins the
// revision it answered at; every later read (and every page of a scan)
// asks for that revision (WithRev), so a View is one snapshot. Scans are
// paginated (WithLimit, PageSize keys a request, up to 32 times that
// while the values are small: etcd_txn.go), so a big prefix never
// makes one huge response.
//
// Update is an optimistic transaction, in the manner of JuiceFS's tkv on
// etcd, but stricter: reads go to the snapshot as in View and are recorded
// with the ModRevision they saw (0 for an absent key) in a read set; a
// Scan records each key it passed and the range it covered ([from, the
// last key it yielded] when fn stopped it, else the whole range). Writes
// are buffered (Get and Scan see them: read-your-writes, merged in key
// order). The commit is one etcd Txn:
//
//	If(  ModRevision(k) = seen        for every key read or scanned
//	     ModRevision([from,to)) < rev+1  for every scanned range
//	     ModRevision(marker) = last )
//	Then(puts, deletes, Put(marker, seq))
//	Else(Get(marker))
//
// The per-key compares catch a key changed or deleted since the snapshot;
// the range compare catches a key created in a scanned range (etcd checks
// a range compare against every key present in it, and an empty range
// passes). So a commit succeeds only if everything the function read is
// still what it was: the transaction is serializable at its commit
// revision. A failed compare is a conflict: the function runs again, on a
// fresh snapshot, up to Retries times with a growing, jittered backoff,
// then ErrConflict. The function may therefore run more than once (as
// with JuiceFS); the store serialises its own writers (Store.mu), so only
// another host can make it.
//
// Commit markers make a commit whose answer was lost (leader lost, timeout)
// safe to retry. Each commit takes a slot of this client and puts a fresh
// sequence number in the slot's marker, comparing the marker's ModRevision
// with the one its last commit left. When the answer is lost, a fence Txn
// (If the marker is unchanged Then put "fenced" Else Get it) decides: the
// fence succeeded, so the commit did not and never will apply (its compare
// on the marker now fails) and the function is retried; or the marker holds
// our sequence number, so the commit applied and Update returns nil. If no
// fence gets through before the bounded wait, Update returns an error (the
// write is not acknowledged; it may or may not have applied). Markers are
// not on a lease: a lease lapsing while the client is cut off would turn
// its next commits into conflicts; the markers of a client that died are
// a few bytes each, that no one compares.
//
// Limits, never raised: etcd refuses a Txn with more than --max-txn-ops
// (128) compares, or more than 128 operations in a branch, and a request
// over --max-request-bytes (1.5 MiB). Set and Delete return ErrTxnTooBig
// (as Badger's do) when the transaction would pass MaxTxnOps (less one
// for the marker) or MaxTxnBytes (an estimate of the request's size, with
// a margin under 1.5 MiB); the commit checks again, since reads add
// compares. The store then splits the write (store/commit.go). A value
// larger than MaxTxnBytes cannot be stored at all (ErrTxnTooBig).
//
// Batch groups its writes into transactions under the same limits (no
// compares), each committed when the next write would not fit; a batch is
// not atomic as a whole, as documented for Batch. Its puts and deletes are
// blind, so a group whose answer was lost is simply sent again.
//
// Sync is a no-op: etcd acknowledges a commit once a quorum of members has
// it in its fsync'd log. Size is etcd's own figure, from the Status of the
// endpoints: lsm is the database's bytes in use, vlog its free pages; it
// covers the whole cluster, every prefix.
//
// Every request is bounded by RequestTimeout (and made with
// WithRequireLeader, so a member cut off from its leader answers at once
// and the client tries another): a cluster that does not answer gives an
// error after that wait, never a hang. A commit sent while the leader
// dies may wait that long (its proposal died with the leader) before the
// fence settles it: the pause a member's loss costs.
//
// Values are stored as given, or sealed with AES-GCM when EncryptionKey is
// set (etcd_crypt.go): etcd never sees plain content. Keys are not
// encrypted (the order of scans depends on them): names of files and
// attributes are visible to whoever reads the cluster.

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdOptions configures OpenEtcd.
type EtcdOptions struct {
	// Endpoints are the members' client URLs (host:port or http://host:port).
	Endpoints []string
	// Prefix names the store in the cluster: its keys are under Prefix + "/".
	Prefix string
	// EncryptionKey, when set (16, 24 or 32 bytes), seals every value.
	EncryptionKey []byte
	// TLS, Username and Password are passed to the client as they are.
	TLS                *tls.Config
	Username, Password string
	// RequestTimeout bounds each request (default 5s).
	RequestTimeout time.Duration
	// DialTimeout bounds the first connection (default RequestTimeout).
	DialTimeout time.Duration
	// MaxTxnOps is the cluster's --max-txn-ops (default 128).
	MaxTxnOps int
	// MaxTxnBytes caps the estimated size of one transaction's request
	// (default 1.5 MiB less 64 KiB, under --max-request-bytes' default).
	MaxTxnBytes int
	// Retries is how many times a conflicting Update runs again (default 64).
	Retries int
	// PageSize is the number of keys one scan request asks for (default 256).
	PageSize int
	// Logf receives the lines that say the cluster stopped and started
	// answering (etcd_health.go); nil: not logged.
	Logf func(format string, a ...any)
}

const (
	defaultMaxTxnBytes = 1536<<10 - 64<<10
	opOverhead         = 16 // protobuf framing of one put or delete, rounded up
	cmpOverhead        = 24 // of one compare
	markerValue        = "fenced"
)

// errConflict and errSnapshotGone make Update run its function again.
var (
	errConflict     = errors.New("backend: etcd: transaction conflict")
	errSnapshotGone = errors.New("backend: etcd: snapshot revision compacted")
	errEmptyKey     = errors.New("backend: empty key")
)

type etcdKV struct {
	cli     *clientv3.Client
	ctx     context.Context
	cancel  context.CancelFunc
	o       EtcdOptions
	data    string // P/k/
	meta    string // P/x/
	markers string // P/x/txn/<client>/
	aead    cipher.AEAD
	seq     atomic.Uint64
	closed  atomic.Bool
	slotMu  sync.Mutex
	free    []*slot
	slots   int
	closeMu sync.Mutex
	fences  atomic.Int64 // commits whose answer was lost (tests read it)
	openRev int64        // the cluster's revision when opened (etcd_watch.go)
	// progress: what the watch has delivered (etcd_versioned.go).
	progress delivered
	// unreachable: the cluster did not answer (etcd_health.go).
	unreachable atomic.Bool
	downSince   atomic.Int64
	// loseAnswer, set by tests, makes a commit's answer look lost.
	loseAnswer func() bool
}

// slot is one commit marker; a commit holds it from send to answer.
type slot struct {
	key string
	rev int64 // the marker's ModRevision after our last commit; -1: unknown
}

// OpenEtcd connects to the cluster and opens the store under o.Prefix.
func OpenEtcd(o EtcdOptions) (KV, error) {
	if o.Prefix == "" || len(o.Endpoints) == 0 {
		return nil, errors.New("backend: etcd needs endpoints and a prefix")
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 5 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = o.RequestTimeout
	}
	if o.MaxTxnOps <= 1 {
		o.MaxTxnOps = 128
	}
	if o.MaxTxnBytes <= 0 {
		o.MaxTxnBytes = defaultMaxTxnBytes
	}
	if o.Retries <= 0 {
		o.Retries = 64
	}
	if o.PageSize <= 0 {
		o.PageSize = 256
	}
	e := &etcdKV{o: o, data: o.Prefix + "/k/", meta: o.Prefix + "/x/"}
	if len(o.EncryptionKey) > 0 {
		a, err := newAEAD(o.EncryptionKey)
		if err != nil {
			return nil, err
		}
		e.aead = a
	}
	var id [8]byte
	rand.Read(id[:])
	e.markers = e.meta + "txn/" + hex.EncodeToString(id[:]) + "/"
	e.ctx, e.cancel = context.WithCancel(context.Background())
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            o.Endpoints,
		DialTimeout:          o.DialTimeout,
		DialKeepAliveTime:    10 * time.Second, // gRPC's least; etcd refuses pings under 5s
		DialKeepAliveTimeout: o.RequestTimeout,
		TLS:                  o.TLS,
		Username:             o.Username,
		Password:             o.Password,
		Logger:               zap.NewNop(),
		Context:              e.ctx,
		// Reads are retried (on another member, during an election) until
		// the request's deadline, not a count.
		MaxUnaryRetries: 1 << 20,
	})
	if err != nil {
		e.cancel()
		return nil, fmt.Errorf("backend: etcd: %w", err)
	}
	e.cli = cli
	if err := e.checkKey(); err != nil {
		cli.Close()
		e.cancel()
		return nil, err
	}
	return e, nil
}

// reqCtx bounds one request.
func (e *etcdKV) reqCtx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(e.ctx, e.o.RequestTimeout)
	return ctxLeader(ctx), cancel
}

func ctxLeader(ctx context.Context) context.Context { return clientv3.WithRequireLeader(ctx) }

// is reports whether err is the etcd error target (as the client returns
// it, or as a gRPC status carrying its text).
func is(err, target error) bool {
	return errors.Is(err, target) || rpctypes.ErrorDesc(err) == target.Error()
}

func (e *etcdKV) mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%w: %v", errSnapshotGone, err)
	case is(err, rpctypes.ErrTooManyOps), is(err, rpctypes.ErrRequestTooLarge):
		return fmt.Errorf("%w: %v", ErrTxnTooBig, err)
	case is(err, rpctypes.ErrNoSpace):
		return fmt.Errorf("%w: %v", ErrNoSpace, err)
	case e.closed.Load():
		return ErrClosed
	case noAnswer(err):
		e.markDown(err)
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return fmt.Errorf("backend: etcd: %w", err)
}

// definite reports whether a failed commit certainly did not apply (etcd
// refused it before proposing it).
func definite(err error) bool {
	for _, t := range []error{rpctypes.ErrTooManyOps, rpctypes.ErrRequestTooLarge,
		rpctypes.ErrDuplicateKey, rpctypes.ErrEmptyKey, rpctypes.ErrNoSpace} {
		if is(err, t) {
			return true
		}
	}
	return false
}

// Unsynced is always false: a commit etcd acknowledged is on a quorum's
// disks already (the store asks before it calls Sync).
func (e *etcdKV) Unsynced() bool { return false }

// Sync has nothing to do (see Unsynced).
func (e *etcdKV) Sync() error {
	if e.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Size is etcd's database size as the endpoints report it (the largest
// answer): lsm = bytes in use, vlog = free pages. It is the cluster's,
// every prefix included; zeros when no endpoint answers within a second.
func (e *etcdKV) Size() (lsm, vlog int64) {
	for _, ep := range e.cli.Endpoints() {
		ctx, cancel := context.WithTimeout(e.ctx, min(time.Second, e.o.RequestTimeout))
		st, err := e.cli.Status(ctx, ep)
		cancel()
		if err != nil {
			continue
		}
		lsm = max(lsm, st.DbSizeInUse)
		vlog = max(vlog, st.DbSize-st.DbSizeInUse)
	}
	return lsm, vlog
}

// Close deletes this client's commit markers and closes the client.
func (e *etcdKV) Close() error {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed.Load() {
		return nil
	}
	// Best effort, briefly: markers left behind (cluster unreachable) are a
	// few bytes each, and no other client ever compares them.
	ctx, cancel := context.WithTimeout(e.ctx, min(time.Second, e.o.RequestTimeout))
	e.cli.Delete(ctx, e.markers, clientv3.WithPrefix())
	cancel()
	e.closed.Store(true)
	err := e.cli.Close()
	e.cancel()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
