package mcp

import (
	"context"
	"fmt"
	"math"

	"golang.org/x/time/rate"
)

// Limits bound the calls of one token, so that one agent cannot starve
// the others: calls a second (a token bucket holding one second's worth:
// a call over it is refused at once, with a tool error that says so) and
// calls at once (a call over it waits its turn; one cancelled while it
// waits does not run). Zero is no limit.
type Limits struct {
	PerSecond  float64
	Concurrent int
}

// DefaultLimits are a token's limits when neither the tokens file nor
// the command line says otherwise.
var DefaultLimits = Limits{PerSecond: 20, Concurrent: 4}

// Limit is the state of one token's limits.
type Limit struct {
	limits Limits
	name   string
	rate   *rate.Limiter // nil: no rate limit
	slots  chan struct{} // nil: no bound on calls at once
}

// NewLimit returns the state of limits l for the token name.
func NewLimit(name string, l Limits) *Limit {
	lim := &Limit{limits: l, name: name}
	if l.PerSecond > 0 {
		lim.rate = rate.NewLimiter(rate.Limit(l.PerSecond), max(1, int(math.Ceil(l.PerSecond))))
	}
	if l.Concurrent > 0 {
		lim.slots = make(chan struct{}, l.Concurrent)
	}
	return lim
}

// Limits returns the limits l keeps.
func (l *Limit) Limits() Limits { return l.limits }

// errOverRate is the tool error of a call over its token's rate.
type errOverRate struct{ msg string }

func (e *errOverRate) Error() string { return e.msg }

// Admit lets a call run: it refuses one over the rate at once (an
// *errOverRate), and waits for a turn when the token's calls at once are
// all running (ctx's error when ctx ends first). release ends the call.
func (l *Limit) Admit(ctx context.Context) (release func(), err error) {
	if l.rate != nil && !l.rate.Allow() {
		who := "token " + l.name
		if l.name == "" {
			who = "this server's token"
		}
		return nil, &errOverRate{fmt.Sprintf("Error: too many calls: %s may make %g calls a second (calls-per-second in the tokens file, or the server's --calls-per-second), so this call was refused and did nothing: wait a moment and call again", who, l.limits.PerSecond)}
	}
	if l.slots == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
		return func() { <-l.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
