package redisatomic

import (
	"context"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Semaphore is a counting semaphore with leases: at most Capacity live permits at any instant of
// the server's clock, each with a fence greater than every fence issued before it.
//
// Keys (SemaphoreKeys): `<ns>:sem:v1:{name}` (a sorted set of holders by lease end),
// `…:holders` (each holder's fence) and `…:fence` (the last fence issued). Scripts sem_acquire,
// sem_extend, sem_release, sem_inspect: an acquire reclaims up to 64 expired permits first.
// Retry: acquire with the caller's token (WithToken) is retry-safe (the same token gets its own
// permit back); without it the module never resends it. Extend and release are retry-safe.
type Semaphore struct {
	client   *Client
	keys     SemaphoreKeys
	capacity uint32
}

// SemaphoreKeys are a semaphore's keys.
type SemaphoreKeys struct {
	Permits, Holders, Fence string
}

// MaxCapacity is the largest semaphore.
const MaxCapacity = 100_000

// NewSemaphore is the semaphore name under namespace with capacity permits (1..=100 000).
func NewSemaphore(client *Client, namespace, name string, capacity uint32) (*Semaphore, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	if capacity == 0 || capacity > MaxCapacity {
		return nil, wrap(ErrBadArgument, nil, "capacity must be in 1..=%d, got %d", MaxCapacity, capacity)
	}
	permits, err := key(namespace, "sem", "1", name)
	if err != nil {
		return nil, err
	}
	return &Semaphore{client: client, capacity: capacity,
		keys: SemaphoreKeys{Permits: permits, Holders: permits + ":holders", Fence: permits + ":fence"}}, nil
}

// Keys are the semaphore's keys.
func (s *Semaphore) Keys() SemaphoreKeys { return s.keys }

// Capacity is how many permits may be live at once.
func (s *Semaphore) Capacity() uint32 { return s.capacity }

// SemaphoreAcquireResult is what Semaphore.Acquire answers: *Permit or Full.
type SemaphoreAcquireResult interface {
	Outcome() string
	isSemAcquire()
}

// Full is the refusal of Semaphore.Acquire: every permit is live; the first ends in RetryAfter.
type Full struct{ RetryAfter time.Duration }

// Outcome is "full".
func (Full) Outcome() string { return "full" }
func (Full) isSemAcquire()   {}

// Permit is a live permit (the outcome "acquired"): Fence, Token, TTL, ExpiresBy, Extend, Watch,
// and Release, which ends the handle.
type Permit struct {
	lease
	sem *Semaphore
}

// Outcome is "acquired".
func (*Permit) Outcome() string { return "acquired" }
func (*Permit) isSemAcquire()   {}

// Release frees the permit if this lease still holds it and ends the handle.
func (p *Permit) Release(ctx context.Context) (ReleaseResult, error) {
	if err := p.end("release"); err != nil {
		return nil, err
	}
	return p.sem.Release(ctx, p.token, p.fence)
}

// Acquire takes a permit for ttl (1 ms..=7 days) if one is free; WithToken uses the caller's
// token (a resend after an unknown outcome is then safe). WithWait is not taken.
func (s *Semaphore) Acquire(ctx context.Context, ttl time.Duration, opts ...AcquireOption) (SemaphoreAcquireResult, error) {
	o := acquireOptions{}
	for _, f := range opts {
		f(&o)
	}
	callerToken := o.token != ""
	if !callerToken {
		o.token = randomToken()
	}
	if err := checkToken(o.token); err != nil {
		return nil, err
	}
	ttlMs, err := millis("ttl", ttl, maxTTL)
	if err != nil {
		return nil, err
	}
	sent := time.Now()
	reply, err := scripts.CallSemAcquire(ctx, s.client,
		scripts.SemAcquireKeys{Permits: s.keys.Permits, Holders: s.keys.Holders, Fence: s.keys.Fence},
		scripts.SemAcquireArgs{Holder: o.token, Capacity: s.capacity, TtlMs: ttlMs})
	if err != nil {
		return nil, retrySafeIf(replyError(err), callerToken)
	}
	switch r := reply.(type) {
	case scripts.SemAcquireAcquired:
		return s.permit(o.token, Fence(r.Fence), sent, ttl), nil
	case scripts.SemAcquireFull:
		return Full{RetryAfter: ms(r.RetryAfterMs)}, nil
	}
	return nil, unexpected("sem_acquire", reply)
}

func (s *Semaphore) permit(token string, fence Fence, sent time.Time, ttl time.Duration) *Permit {
	p := &Permit{lease: newLease(token, fence, sent, ttl), sem: s}
	p.renew = func(ctx context.Context, ttl time.Duration) (ExtendResult, error) {
		return s.Extend(ctx, token, fence, ttl)
	}
	p.giveBack = func(ctx context.Context) { _, _ = s.Release(ctx, token, fence) }
	return p
}

// Extend sets token's permit to end ttl from the server's now: the by-parts twin of
// Permit.Extend.
func (s *Semaphore) Extend(ctx context.Context, token string, fence Fence, ttl time.Duration) (ExtendResult, error) {
	ttlMs, err := millis("ttl", ttl, maxTTL)
	if err == nil {
		err = checkToken(token)
	}
	if err != nil {
		return nil, err
	}
	reply, err := scripts.CallSemExtend(ctx, s.client, scripts.SemExtendKeys{Permits: s.keys.Permits, Holders: s.keys.Holders},
		scripts.SemExtendArgs{Holder: token, Fence: fenceArg(fence), TtlMs: ttlMs})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.SemExtendExtended); ok {
		return Extended{Fence: Fence(r.Fence), TTL: ms(r.TtlMs)}, nil
	}
	return Lost{}, nil
}

// Release frees token's permit: the by-parts twin of Permit.Release.
func (s *Semaphore) Release(ctx context.Context, token string, fence Fence) (ReleaseResult, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	reply, err := scripts.CallSemRelease(ctx, s.client, scripts.SemReleaseKeys{Permits: s.keys.Permits, Holders: s.keys.Holders},
		scripts.SemReleaseArgs{Holder: token, Fence: fenceArg(fence)})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.SemReleaseReleased); ok {
		return Released{Fence: Fence(r.Fence)}, nil
	}
	return Lost{}, nil
}

// SemaphoreState is a semaphore's state: Live permits, the next to expire in NextExpiry, and
// the last fence issued.
type SemaphoreState struct {
	Live       uint32
	NextExpiry time.Duration
	LastFence  Fence
}

// Inspect reads the semaphore without changing it.
func (s *Semaphore) Inspect(ctx context.Context) (SemaphoreState, error) {
	reply, err := scripts.CallSemInspect(ctx, s.client, scripts.SemInspectKeys{Permits: s.keys.Permits, Fence: s.keys.Fence},
		scripts.SemInspectArgs{})
	if err != nil {
		return SemaphoreState{}, replyError(err)
	}
	r, ok := reply.(scripts.SemInspectPermits)
	if !ok {
		return SemaphoreState{}, unexpected("sem_inspect", reply)
	}
	return SemaphoreState{Live: uint32(min(r.Live, MaxCapacity)), NextExpiry: ms(r.NextExpiryMs), LastFence: Fence(r.LastFence)}, nil
}
