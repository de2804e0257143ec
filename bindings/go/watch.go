package redisatomic

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// WatchOption tunes a watchdog.
type WatchOption func(*watchConfig)

type watchConfig struct{ renew, margin float64 }

// WithRenewFraction renews after this fraction of the lease, in (0, 1); default 1/3 (two
// renewals can fail before the lease is in danger).
func WithRenewFraction(f float64) WatchOption { return func(c *watchConfig) { c.renew = f } }

// WithMarginFraction declares the lease lost this fraction of the lease before the proven lease
// ends, in [0, renew); default 0.05 (room for timer lateness and clock-rate drift).
func WithMarginFraction(f float64) WatchOption { return func(c *watchConfig) { c.margin = f } }

// LeaseLostReason is why a watched lease was lost.
type LeaseLostReason string

const (
	// LeaseNotHeld: the server answered that this token and fence no longer hold the lease.
	LeaseNotHeld LeaseLostReason = "not_held"
	// LeaseUnconfirmed: no renewal succeeded before the proven lease ended (server unreachable
	// or stalled); locks and permits are then released once, in case a late renewal re-armed it.
	LeaseUnconfirmed LeaseLostReason = "unconfirmed"
)

// LeaseLostError is a watched lease's loss: Watched.Err, and the cause of Watched.Context.
type LeaseLostError struct{ Reason LeaseLostReason }

// Error describes the error.
func (e *LeaseLostError) Error() string { return fmt.Sprintf("lease lost (%s)", e.Reason) }

// ErrorCode is the vocabulary's error code, lease_lost.
func (e *LeaseLostError) ErrorCode() string { return "lease_lost" }

// Watched is a lease a watchdog goroutine renews. Invariant: while Lost is open, the lease is
// provably held: every renewal that succeeded was sent at a local instant s, so the server's
// lease lasts at least until s + ttl, and the loss is declared margin before that whether or not
// the server answers. Work under Context (cancelled on loss) or select on Lost; pass Fence to
// every protected write (a paused process can outlive any signal; the fence cannot).
type Watched struct {
	lease   *lease
	cfg     watchConfig
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	failed  atomic.Uint32
	lostErr atomic.Pointer[LeaseLostError]
}

func startWatch(l *lease, cfg watchConfig) *Watched {
	ctx, cancel := context.WithCancelCause(context.Background())
	w := &Watched{lease: l, cfg: cfg, ctx: ctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Lost is closed when the lease is lost (Err says why) or the watch stopped.
func (w *Watched) Lost() <-chan struct{} { return w.ctx.Done() }

// Context is cancelled when the lease is lost (context.Cause is the *LeaseLostError) or Stop.
func (w *Watched) Context() context.Context { return w.ctx }

// Err is nil while the lease is held, else the *LeaseLostError.
func (w *Watched) Err() error {
	if e := w.lostErr.Load(); e != nil {
		return e
	}
	return nil
}

// IsHeld reports whether the lease is still provably held.
func (w *Watched) IsHeld() bool { return w.lostErr.Load() == nil }

// FailedRenewals counts renewals that failed since the last that succeeded.
func (w *Watched) FailedRenewals() uint32 { return w.failed.Load() }

// Fence is the watched lease's fence.
func (w *Watched) Fence() Fence { return w.lease.fence }

// Stop stops the renewals and waits for the goroutine (the handle stays usable: release it).
func (w *Watched) Stop() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	w.cancel(context.Canceled)
}

func (w *Watched) run() {
	defer close(w.done)
	ttl := w.lease.TTL()
	deadline := w.lease.ExpiresBy().Add(-time.Duration(w.cfg.margin * float64(ttl)))
	next := time.Now().Add(time.Duration(w.cfg.renew * float64(ttl)))
	for attempt := 1; ; {
		if !w.sleepUntil(minTime(next, deadline)) {
			return
		}
		if !time.Now().Before(deadline) {
			w.lose(LeaseUnconfirmed)
			return
		}
		sent := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		res, err := w.lease.renew(ctx, ttl)
		cancel()
		switch res.(type) {
		case Extended:
			w.failed.Store(0)
			w.lease.mu.Lock()
			w.lease.expiresBy = sent.Add(ttl)
			w.lease.mu.Unlock()
			deadline = sent.Add(ttl - time.Duration(w.cfg.margin*float64(ttl)))
			next, attempt = sent.Add(time.Duration(w.cfg.renew*float64(ttl))), 1
		case Lost:
			w.lose(LeaseNotHeld)
			return
		default:
			_ = err // an error: retried with backoff while the proven lease lasts
			w.failed.Add(1)
			next = time.Now().Add(DefaultRetryPolicy().backoff(attempt))
			attempt++
		}
	}
}

// sleepUntil waits until t; false when stopped first.
func (w *Watched) sleepUntil(t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-w.stop:
		return false
	}
}

func (w *Watched) lose(reason LeaseLostReason) {
	e := &LeaseLostError{Reason: reason}
	w.lostErr.Store(e)
	w.cancel(e)
	if reason == LeaseUnconfirmed && w.lease.giveBack != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		w.lease.giveBack(ctx)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
