package redisatomic

import (
	"context"
	"sync"
	"time"
)

// Lock is a held lock (the outcome "acquired"): its fence, token and lease, Extend, and Release,
// which ends the handle. Safe for concurrent use.
type Lock struct {
	locks     *Locks
	resource  string
	token     string
	fence     Fence
	mu        sync.Mutex
	ttl       time.Duration
	expiresBy time.Time
	ended     bool
}

// Outcome is "acquired".
func (*Lock) Outcome() string { return "acquired" }
func (*Lock) isAcquire()      {}

// Resource is the locked resource.
func (g *Lock) Resource() string { return g.resource }

// Fence is the lease's fence: pass it to every write the lease protects.
func (g *Lock) Fence() Fence { return g.fence }

// Token is the owner token; reuse it (WithToken, Locks.Release) after an unknown outcome.
func (g *Lock) Token() string { return g.token }

// TTL is the lease's length as last set (by the take or the last confirmed extend).
func (g *Lock) TTL() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ttl
}

// ExpiresBy is until when, by the local clock, the lease surely lasts (measured from before the
// request that set it was sent).
func (g *Lock) ExpiresBy() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.expiresBy
}

// Ended reports whether Release was called (a second one is ErrHandleEnded).
func (g *Lock) Ended() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ended
}

// Extend sets the lease to end ttl from the server's now (absolute, never added).
func (g *Lock) Extend(ctx context.Context, ttl time.Duration) (ExtendResult, error) {
	if g.Ended() {
		return nil, wrap(ErrHandleEnded, nil, "extend after release")
	}
	sent := time.Now()
	res, err := g.locks.Extend(ctx, g.resource, g.token, g.fence, ttl)
	if _, ok := res.(Extended); ok {
		g.mu.Lock()
		g.ttl, g.expiresBy = ttl, sent.Add(ttl)
		g.mu.Unlock()
	}
	return res, err
}

// Release releases the lock if this lease still holds it and ends the handle (after an unknown
// outcome, repeat it by parts: Locks.Release with Token and Fence).
func (g *Lock) Release(ctx context.Context) (ReleaseResult, error) {
	g.mu.Lock()
	ended := g.ended
	g.ended = true
	g.mu.Unlock()
	if ended {
		return nil, wrap(ErrHandleEnded, nil, "release after release")
	}
	return g.locks.Release(ctx, g.resource, g.token, g.fence)
}
