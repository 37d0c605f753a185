package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Health of the connection to the cluster. A request that gets no answer
// within RequestTimeout (every member down or cut off) marks the cluster
// unreachable: one line is logged (EtcdOptions.Logf), and from then on
// View, Update and batches fail at once with ErrUnavailable, rather than
// each waiting out the timeout while holding whatever lock its caller
// holds. A prober asks the cluster every half second; when it answers,
// one more line is logged and requests go through again. The watch
// (etcd_watch.go) resumes by itself from the last revision it saw, so
// what other hosts wrote meanwhile reaches the caches.
//
// A member's or the leader's loss is not an outage: requests are retried
// on the other members within the same timeout (an election takes a
// second or two), so it is a pause.

// down reports the cluster unreachable: ErrUnavailable, or nil.
func (e *etcdKV) down() error {
	if e.unreachable.Load() {
		return fmt.Errorf("%w (since %s)", ErrUnavailable, time.Unix(0, e.downSince.Load()).Format(time.TimeOnly))
	}
	return nil
}

// noAnswer reports whether err means the cluster gave no answer in time.
func noAnswer(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if s, ok := status.FromError(err); ok && (s.Code() == codes.DeadlineExceeded || s.Code() == codes.Unavailable) {
		return true
	}
	return strings.Contains(err.Error(), "context deadline exceeded")
}

// markDown records that the cluster did not answer (cause), logging once
// and starting the prober.
func (e *etcdKV) markDown(cause error) {
	if e.closed.Load() || !e.unreachable.CompareAndSwap(false, true) {
		return
	}
	e.downSince.Store(time.Now().UnixNano())
	e.logf("etcd at %s does not answer (%v): writes fail with EIO and reads are served from cache until it does",
		strings.Join(e.o.Endpoints, ","), cause)
	go e.probe()
}

// probe asks the cluster until it answers, then clears the mark.
func (e *etcdKV) probe() {
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(e.ctx, time.Second)
		_, err := e.cli.Get(ctxLeader(ctx), e.meta+"enc")
		cancel()
		if err == nil {
			since := time.Unix(0, e.downSince.Load())
			e.unreachable.Store(false)
			e.logf("etcd answers again (unreachable for %v)", time.Since(since).Round(time.Second))
			return
		}
	}
}

func (e *etcdKV) logf(format string, a ...any) {
	if e.o.Logf != nil {
		e.o.Logf(format, a...)
	}
}
