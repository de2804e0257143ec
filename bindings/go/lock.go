package redisatomic

import (
	"context"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Locks are locks with leases and fencing tokens under one namespace, keyed per call by
// resource: at most one owner token holds a resource's lock at any instant of the server's clock,
// and every acquisition gets a fence greater than every fence issued before it.
//
// Keys (LockKeys): `<ns>:lock:v1:{resource}` holds "<fence>:<token>" with the lease as its TTL;
// `<ns>:lock:v1:{resource}:fence` holds the last fence issued. The scripts are the library's
// (lock_acquire, lock_extend, lock_release, lock_inspect), all retry-safe: the same token while it
// holds the lock gets its own fence back.
type Locks struct {
	client    *Client
	namespace string
}

// LockKeys are the keys of one resource's lock.
type LockKeys struct {
	Lock  string
	Fence string
}

// NewLocks are the locks under namespace (1..=512 bytes without '{', '}' or ':').
func NewLocks(client *Client, namespace string) (*Locks, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return &Locks{client: client, namespace: namespace}, nil
}

// Keys are the keys of resource's lock (a resource is 1..=512 bytes without '{' or '}').
func (l *Locks) Keys(resource string) (LockKeys, error) {
	if resource == "" {
		return LockKeys{}, wrap(ErrBadArgument, nil, "resource must not be empty")
	}
	lock, err := key(l.namespace, "lock", "1", resource)
	if err != nil {
		return LockKeys{}, err
	}
	return LockKeys{Lock: lock, Fence: lock + ":fence"}, nil
}

// AcquireOption changes how Acquire tries.
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	token string
	wait  time.Duration
}

// WithToken acquires with the caller's owner token instead of a fresh random one: after an
// OutcomeUnknownError, resending with the same token is safe (while it holds the lock, the same
// fence comes back), so the error says RetrySafe.
func WithToken(token string) AcquireOption {
	return func(o *acquireOptions) { o.token = token }
}

// WithWait waits up to wait for the lock: tries again while it is held (full-jitter backoff,
// never longer than the holder's remaining lease), the last try at wait; Held when it runs out.
func WithWait(wait time.Duration) AcquireOption {
	return func(o *acquireOptions) { o.wait = wait }
}

// AcquireResult is what Acquire answers: *Lock (the caller holds it) or Held.
type AcquireResult interface {
	Outcome() string
	isAcquire()
}

// Held is the refusal of Acquire: someone else holds the lock; its lease ends in RetryAfter (a
// release may free it sooner).
type Held struct {
	RetryAfter time.Duration
}

// Outcome is "held".
func (Held) Outcome() string { return "held" }
func (Held) isAcquire()      {}

// Acquire tries once (or, WithWait, until wait) to take resource for ttl (1 ms..=7 days).
func (l *Locks) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...AcquireOption) (AcquireResult, error) {
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
	res, err := l.acquireUntil(ctx, resource, o.token, ttl, time.Now().Add(o.wait))
	// Without the caller's token the caller cannot resend it (a resend takes a second lease).
	return res, retrySafeIf(err, callerToken)
}

func (l *Locks) acquireUntil(ctx context.Context, resource, token string, ttl time.Duration, until time.Time) (AcquireResult, error) {
	backoff := RetryPolicy{BaseBackoff: 10 * time.Millisecond, MaxBackoff: time.Second}
	for attempt := 1; ; attempt++ {
		res, err := l.acquireOnce(ctx, resource, token, ttl)
		held, isHeld := res.(Held)
		if err != nil || !isHeld || !time.Now().Before(until) {
			return res, err
		}
		wait := min(backoff.backoff(attempt), max(held.RetryAfter, time.Millisecond), time.Until(until))
		if !pause(ctx, wait, until.Add(time.Millisecond)) {
			return res, nil
		}
	}
}

func (l *Locks) acquireOnce(ctx context.Context, resource, token string, ttl time.Duration) (AcquireResult, error) {
	ttlMs, err := millis("ttl", ttl, maxTTL)
	if err != nil {
		return nil, err
	}
	keys, err := l.Keys(resource)
	if err != nil {
		return nil, err
	}
	sent := time.Now()
	reply, err := scripts.CallLockAcquire(ctx, l.client,
		scripts.LockAcquireKeys{Lock: keys.Lock, Fence: keys.Fence},
		scripts.LockAcquireArgs{Token: token, TtlMs: ttlMs})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.LockAcquireAcquired:
		return newLock(l, resource, token, Fence(r.Fence), sent, ttl), nil
	case scripts.LockAcquireHeld:
		return Held{RetryAfter: ms(r.RetryAfterMs)}, nil
	}
	return nil, unexpected("lock_acquire", reply)
}

// Extend sets the lease fence of token's lock on resource to end ttl from the server's now
// (absolute, never added): the by-parts twin of Lock.Extend.
func (l *Locks) Extend(ctx context.Context, resource, token string, fence Fence, ttl time.Duration) (ExtendResult, error) {
	ttlMs, err := millis("ttl", ttl, maxTTL)
	if err != nil {
		return nil, err
	}
	keys, err := l.leaseKeys(resource, token)
	if err != nil {
		return nil, err
	}
	reply, err := scripts.CallLockExtend(ctx, l.client, scripts.LockExtendKeys{Lock: keys.Lock},
		scripts.LockExtendArgs{Token: token, Fence: fenceArg(fence), TtlMs: ttlMs})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.LockExtendExtended); ok {
		return Extended{Fence: Fence(r.Fence), TTL: ms(r.TtlMs)}, nil
	}
	return Lost{}, nil // the decoder admits no third reply
}

// Release frees resource if token holds it with the lease fence: the by-parts twin of
// Lock.Release.
func (l *Locks) Release(ctx context.Context, resource, token string, fence Fence) (ReleaseResult, error) {
	keys, err := l.leaseKeys(resource, token)
	if err != nil {
		return nil, err
	}
	reply, err := scripts.CallLockRelease(ctx, l.client, scripts.LockReleaseKeys{Lock: keys.Lock},
		scripts.LockReleaseArgs{Token: token, Fence: fenceArg(fence)})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.LockReleaseReleased); ok {
		return Released{Fence: Fence(r.Fence)}, nil
	}
	return Lost{}, nil // the decoder admits no third reply
}

func (l *Locks) leaseKeys(resource, token string) (LockKeys, error) {
	if err := checkToken(token); err != nil {
		return LockKeys{}, err
	}
	return l.Keys(resource)
}

func fenceArg(f Fence) string { return formatUint(uint64(f)) }

// LockState is what Inspect answers: Locked or Free.
type LockState interface {
	Outcome() string
	isLockState()
}

// Locked: held with Fence for about TTL more.
type Locked struct {
	Fence Fence
	TTL   time.Duration
}

// Free: free; the last fence issued (0 if none is remembered).
type Free struct {
	LastFence Fence
}

// Outcome is "locked".
func (Locked) Outcome() string { return "locked" }

// Outcome is "free".
func (Free) Outcome() string { return "free" }
func (Locked) isLockState()  {}
func (Free) isLockState()    {}

// Inspect reads resource's lock without changing it (EVALSHA_RO: runs on replicas).
func (l *Locks) Inspect(ctx context.Context, resource string) (LockState, error) {
	keys, err := l.Keys(resource)
	if err != nil {
		return nil, err
	}
	reply, err := scripts.CallLockInspect(ctx, l.client,
		scripts.LockInspectKeys{Lock: keys.Lock, Fence: keys.Fence}, scripts.LockInspectArgs{})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.LockInspectHeld:
		return Locked{Fence: Fence(r.Fence), TTL: ms(r.TtlMs)}, nil
	case scripts.LockInspectFree:
		return Free{LastFence: Fence(r.LastFence)}, nil
	}
	return nil, unexpected("lock_inspect", reply)
}
