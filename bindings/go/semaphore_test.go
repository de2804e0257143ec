package redisatomic

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Many goroutines on a semaphore of 3: never more than 3 inside at once, every permit's fence
// unique, and every one of them gets in eventually (each retries while Full).
func TestSemaphoreNeverOverCapacity(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	sem, err := NewSemaphore(c, "app", "pool", 3)
	check(t, err)
	var inside, most, done atomic.Int64
	var mu sync.Mutex
	fences := map[Fence]bool{}
	var wg sync.WaitGroup
	for range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				res, err := sem.Acquire(ctx, 10*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				p, ok := res.(*Permit)
				if !ok {
					continue // Full: try again
				}
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				mu.Lock()
				dup := fences[p.Fence()]
				fences[p.Fence()] = true
				mu.Unlock()
				if dup {
					t.Errorf("fence %d issued twice", p.Fence())
				}
				inside.Add(-1)
				if rel, err := p.Release(ctx); err != nil || rel.Outcome() != "released" {
					t.Errorf("release: %v %v", rel, err)
				}
				done.Add(1)
				return
			}
		}()
	}
	wg.Wait()
	if most.Load() > 3 || done.Load() != 60 {
		t.Fatalf("at most %d inside (capacity 3), %d of 60 done", most.Load(), done.Load())
	}
	st, err := sem.Inspect(ctx)
	if err != nil || st.Live != 0 || st.LastFence == 0 {
		t.Fatalf("inspect: %#v %v", st, err)
	}
}

// Full when every permit is live; a permit released frees a place; by-parts calls of a stale
// permit answer Lost.
func TestSemaphoreFullAndRelease(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	sem, _ := NewSemaphore(c, "app", "one", 1)
	first, err := sem.Acquire(ctx, 5*time.Second, WithToken("w1"))
	if err != nil || first.Outcome() != "acquired" {
		t.Fatalf("%#v %v", first, err)
	}
	if full, err := sem.Acquire(ctx, time.Second); err != nil || full.(Full).RetryAfter <= 0 {
		t.Fatalf("second: %#v %v", full, err)
	}
	p := first.(*Permit)
	if ext, err := p.Extend(ctx, 7*time.Second); err != nil || ext != (Extended{p.Fence(), 7 * time.Second}) {
		t.Fatalf("extend: %#v %v", ext, err)
	}
	if rel, err := p.Release(ctx); err != nil || rel != (Released{p.Fence()}) {
		t.Fatalf("release: %#v %v", rel, err)
	}
	if _, err := p.Release(ctx); !errors.Is(err, ErrHandleEnded) {
		t.Fatalf("second release: %v", err)
	}
	if rel, err := sem.Release(ctx, "w1", p.Fence()); err != nil || rel != (Lost{}) {
		t.Fatalf("stale release: %#v %v", rel, err)
	}
	if _, err := NewSemaphore(c, "app", "x", 0); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("capacity 0: %v", err)
	}
	if next, err := sem.Acquire(ctx, time.Second); err != nil || next.(*Permit).Fence() <= p.Fence() {
		t.Fatalf("next: %#v %v", next, err)
	}
}

// A watched lock outlives its TTL while watched; deleted on the server, the watch says
// LeaseNotHeld and cancels its context.
func TestWatchRenewsAndSignalsLoss(t *testing.T) {
	c, locks, ctx := lockFixture(t)
	res, err := locks.Acquire(ctx, "job", 2*time.Second)
	check(t, err)
	lock := res.(*Lock)
	w, err := lock.Watch()
	check(t, err)
	first := lock.ExpiresBy()
	for !lock.ExpiresBy().After(first) { // the first renewal moves the proven end
		select {
		case <-w.Lost():
			t.Fatalf("lost while held: %v", w.Err())
		case <-ctx.Done():
			t.Fatal("no renewal")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if st, err := locks.Inspect(ctx, "job"); err != nil || st.(Locked).Fence != lock.Fence() || !w.IsHeld() {
		t.Fatalf("held: %#v %v", st, err)
	}
	keys, _ := locks.Keys("job")
	check(t, c.Redis().Del(ctx, keys.Lock).Err())
	select {
	case <-w.Context().Done():
	case <-ctx.Done():
		t.Fatal("loss never signalled")
	}
	var lost *LeaseLostError
	if !errors.As(w.Err(), &lost) || lost.Reason != LeaseNotHeld || Code(w.Err()) != "lease_lost" ||
		!errors.As(context.Cause(w.Context()), &lost) || w.IsHeld() {
		t.Fatalf("loss: %v (cause %v)", w.Err(), context.Cause(w.Context()))
	}
	w.Stop()
	if _, err := lock.Watch(WithRenewFraction(0.5), WithMarginFraction(0.6)); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("bad fractions: %v", err)
	}
}

// A stalled server: the watch declares LeaseUnconfirmed before the proven lease ends.
func TestWatchUnconfirmedOnStalledServer(t *testing.T) {
	srv := testserverStart(t)
	c, err := Connect(testCtx(t), srv.URL())
	check(t, err)
	defer func() { _ = c.Close() }()
	locks := newLocks(t, c)
	ctx := testCtx(t)
	res, err := locks.Acquire(ctx, "job", 400*time.Millisecond)
	check(t, err)
	w, err := res.(*Lock).Watch()
	check(t, err)
	srv.Pause()
	defer srv.Resume()
	select {
	case <-w.Lost():
	case <-ctx.Done():
		t.Fatal("loss never signalled")
	}
	var lost *LeaseLostError
	if !errors.As(w.Err(), &lost) || lost.Reason != LeaseUnconfirmed || w.FailedRenewals() == 0 {
		t.Fatalf("loss: %v after %d failed renewals", w.Err(), w.FailedRenewals())
	}
	w.Stop()
}
