package redisatomic

import (
	"context"
	"sync"
	"time"
)

// lease is what every lease handle (Lock, Permit, Claim, Job) shares: the token and fence that
// prove it, the lease's length and local end, the ended flag, and how it is extended (its own
// fenced script) and given back after an unconfirmed loss (locks and permits release; claims
// and jobs do not, see their docs). Its methods are the handles' methods.
type lease struct {
	token     string
	fence     Fence
	renew     func(ctx context.Context, ttl time.Duration) (ExtendResult, error)
	giveBack  func(ctx context.Context)
	mu        sync.Mutex
	ttl       time.Duration
	expiresBy time.Time
	ended     bool
}

func newLease(token string, fence Fence, sent time.Time, ttl time.Duration) lease {
	return lease{token: token, fence: fence, ttl: ttl, expiresBy: sent.Add(ttl)}
}

// Fence is the lease's fence: pass it to every write the lease protects.
func (l *lease) Fence() Fence { return l.fence }

// Token is the owner token; reuse it (by-parts calls, or a WithToken resend) after an unknown
// outcome.
func (l *lease) Token() string { return l.token }

// TTL is the lease's length as last set (by the take or the last confirmed extend).
func (l *lease) TTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// ExpiresBy is until when, by the local clock, the lease surely lasts (measured from before the
// request that set it was sent).
func (l *lease) ExpiresBy() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.expiresBy
}

// Ended reports whether the handle's end verb was called (a second one is ErrHandleEnded).
func (l *lease) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

// Extend sets the lease to end ttl from the server's now (absolute, never added; retry-safe).
func (l *lease) Extend(ctx context.Context, ttl time.Duration) (ExtendResult, error) {
	if l.Ended() {
		return nil, wrap(ErrHandleEnded, nil, "extend after the handle ended")
	}
	sent := time.Now()
	res, err := l.renew(ctx, ttl)
	if _, ok := res.(Extended); ok {
		l.mu.Lock()
		l.ttl, l.expiresBy = ttl, sent.Add(ttl)
		l.mu.Unlock()
	}
	return res, err
}

// end marks the handle ended; ErrHandleEnded if it already was.
func (l *lease) end(verb string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return wrap(ErrHandleEnded, nil, "%s after the handle ended", verb)
	}
	l.ended = true
	return nil
}

// Watch hands the lease to a watchdog goroutine that extends it every RenewFraction of its TTL
// until Stop, and signals its loss (Watched.Lost, Watched.Context).
func (l *lease) Watch(opts ...WatchOption) (*Watched, error) {
	if l.Ended() {
		return nil, wrap(ErrHandleEnded, nil, "watch after the handle ended")
	}
	cfg := watchConfig{renew: 1.0 / 3.0, margin: 0.05}
	for _, o := range opts {
		o(&cfg)
	}
	if !(cfg.renew > 0 && cfg.renew < 1 && cfg.margin >= 0 && cfg.margin < cfg.renew) {
		return nil, wrap(ErrBadArgument, nil, "watchdog fractions must satisfy 0 <= margin < renew < 1, got margin %v renew %v",
			cfg.margin, cfg.renew)
	}
	return startWatch(l, cfg), nil
}
