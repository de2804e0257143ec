package redisatomic

import (
	"context"
	"time"
)

// Lock is a held lock (the outcome "acquired"): its fence, token and lease (Fence, Token, TTL,
// ExpiresBy), Extend, Watch, and Release, which ends the handle. Safe for concurrent use.
type Lock struct {
	lease
	locks    *Locks
	resource string
}

func newLock(l *Locks, resource, token string, fence Fence, sent time.Time, ttl time.Duration) *Lock {
	g := &Lock{lease: newLease(token, fence, sent, ttl), locks: l, resource: resource}
	g.renew = func(ctx context.Context, ttl time.Duration) (ExtendResult, error) {
		return l.Extend(ctx, resource, token, fence, ttl)
	}
	g.giveBack = func(ctx context.Context) { _, _ = l.Release(ctx, resource, token, fence) }
	return g
}

// Outcome is "acquired".
func (*Lock) Outcome() string { return "acquired" }
func (*Lock) isAcquire()      {}

// Resource is the locked resource.
func (g *Lock) Resource() string { return g.resource }

// Release releases the lock if this lease still holds it and ends the handle (after an unknown
// outcome, repeat it by parts: Locks.Release with Token and Fence).
func (g *Lock) Release(ctx context.Context) (ReleaseResult, error) {
	if err := g.end("release"); err != nil {
		return nil, err
	}
	return g.locks.Release(ctx, g.resource, g.token, g.fence)
}
