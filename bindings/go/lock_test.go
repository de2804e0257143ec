package redisatomic

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// One lock's life: acquired, held for a second taker, extended, inspected, released; then the
// ended handle refuses, a stale release is Lost, and the fence of the next taker is larger.
func TestLockLifecycle(t *testing.T) {
	_, locks, ctx := lockFixture(t)
	res, err := locks.Acquire(ctx, "order-42", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lock, ok := res.(*Lock)
	if !ok || lock.Resource() != "order-42" || lock.Fence() == 0 || lock.TTL() != 10*time.Second {
		t.Fatalf("acquire: %#v", res)
	}
	if other, err := locks.Acquire(ctx, "order-42", time.Second); err != nil || other.Outcome() != "held" ||
		other.(Held).RetryAfter <= 0 || other.(Held).RetryAfter > 10*time.Second {
		t.Fatalf("second acquire: %#v %v", other, err)
	}
	if ext, err := lock.Extend(ctx, 20*time.Second); err != nil || ext != (Extended{lock.Fence(), 20 * time.Second}) {
		t.Fatalf("extend: %#v %v", ext, err)
	}
	if lock.TTL() != 20*time.Second || time.Until(lock.ExpiresBy()) > 20*time.Second {
		t.Fatalf("after extend: ttl %v, expires in %v", lock.TTL(), time.Until(lock.ExpiresBy()))
	}
	if st, err := locks.Inspect(ctx, "order-42"); err != nil || st.(Locked).Fence != lock.Fence() {
		t.Fatalf("inspect: %#v %v", st, err)
	}
	if rel, err := lock.Release(ctx); err != nil || rel != (Released{lock.Fence()}) || !lock.Ended() {
		t.Fatalf("release: %#v %v", rel, err)
	}
	if _, err := lock.Release(ctx); !errors.Is(err, ErrHandleEnded) || Code(err) != "handle_ended" || !NothingRan(err) {
		t.Fatalf("second release: %v", err)
	}
	if _, err := lock.Extend(ctx, time.Second); !errors.Is(err, ErrHandleEnded) {
		t.Fatalf("extend after release: %v", err)
	}
	if rel, err := locks.Release(ctx, "order-42", lock.Token(), lock.Fence()); err != nil || rel != (Lost{}) {
		t.Fatalf("stale release: %#v %v", rel, err)
	}
	if ext, err := locks.Extend(ctx, "order-42", lock.Token(), lock.Fence(), time.Second); err != nil || ext != (Lost{}) {
		t.Fatalf("stale extend: %#v %v", ext, err)
	}
	if st, err := locks.Inspect(ctx, "order-42"); err != nil || st != (Free{lock.Fence()}) {
		t.Fatalf("inspect free: %#v %v", st, err)
	}
	next, err := locks.Acquire(ctx, "order-42", time.Second)
	if err != nil || next.(*Lock).Fence() <= lock.Fence() {
		t.Fatalf("next fence %#v after %d: %v", next, lock.Fence(), err)
	}
}

// The caller's token: acquiring again with it while it holds the lock returns the same fence
// (what makes a resend after an unknown outcome safe).
func TestLockSameTokenSameFence(t *testing.T) {
	_, locks, ctx := lockFixture(t)
	first, err := locks.Acquire(ctx, "r", 5*time.Second, WithToken("worker-7"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := locks.Acquire(ctx, "r", 5*time.Second, WithToken("worker-7"))
	if err != nil || again.(*Lock).Fence() != first.(*Lock).Fence() || again.(*Lock).Token() != "worker-7" {
		t.Fatalf("%#v %#v %v", first, again, err)
	}
}

// Bad input is ErrBadArgument before anything is sent, with a clear message.
func TestLockBadArguments(t *testing.T) {
	c, locks, ctx := lockFixture(t)
	for name, call := range map[string]func() error{
		"zero ttl":   func() error { _, err := locks.Acquire(ctx, "r", 0); return err },
		"long ttl":   func() error { _, err := locks.Acquire(ctx, "r", 8*24*time.Hour); return err },
		"empty":      func() error { _, err := locks.Acquire(ctx, "", time.Second); return err },
		"brace":      func() error { _, err := locks.Acquire(ctx, "a{b}", time.Second); return err },
		"token ctrl": func() error { _, err := locks.Acquire(ctx, "r", time.Second, WithToken("a\nb")); return err },
		"release tok": func() error {
			_, err := locks.Release(ctx, "r", "", 1)
			return err
		},
	} {
		err := call()
		if !errors.Is(err, ErrBadArgument) || Code(err) != "bad_argument" || !NothingRan(err) || err.Error() == "bad argument: " {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewLocks(c, "a:b"); !errors.Is(err, ErrBadArgument) {
		t.Errorf("namespace with ':': %v", err)
	}
}

// Waiting: a held lock is taken once its holder releases it within the wait; a wait that runs
// out answers Held.
func TestLockWait(t *testing.T) {
	_, locks, ctx := lockFixture(t)
	first, err := locks.Acquire(ctx, "r", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := locks.Acquire(ctx, "r", time.Second, WithWait(10*time.Millisecond)); err != nil || res.Outcome() != "held" {
		t.Fatalf("short wait: %#v %v", res, err)
	}
	res, err := locks.Acquire(ctx, "r", time.Second, WithWait(5*time.Second))
	if err != nil || res.(*Lock).Fence() <= first.(*Lock).Fence() {
		t.Fatalf("long wait: %#v %v", res, err)
	}
}

// 1 000 goroutines on one lock never overlap (an atomic count of holders inside the critical
// section never exceeds one) and the fences they are given strictly increase.
func TestLockMutualExclusion(t *testing.T) {
	_, locks, ctx := lockFixture(t)
	const workers, rounds = 1000, 1
	var inside, overlaps atomic.Int64
	var mu sync.Mutex
	var fences []Fence
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				res, err := locks.Acquire(ctx, "shared", 10*time.Second, WithWait(30*time.Second))
				if err != nil {
					t.Error(err)
					return
				}
				lock := res.(*Lock)
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				mu.Lock()
				fences = append(fences, lock.Fence())
				mu.Unlock()
				inside.Add(-1)
				if rel, err := lock.Release(ctx); err != nil || rel.Outcome() != "released" {
					t.Errorf("release: %#v %v", rel, err)
				}
			}
		}()
	}
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Fatalf("%d overlaps", overlaps.Load())
	}
	if len(fences) != workers*rounds {
		t.Fatalf("%d acquisitions, want %d", len(fences), workers*rounds)
	}
	for i := 1; i < len(fences); i++ {
		if fences[i] <= fences[i-1] {
			t.Fatalf("fence %d after %d", fences[i], fences[i-1])
		}
	}
}

// After SCRIPT FLUSH the next call meets NOSCRIPT (nothing ran), loads the script and resends it
// once: it succeeds, and the server ran it once (one fence issued).
func TestNoScriptRecovered(t *testing.T) {
	c, locks, ctx := lockFixture(t)
	first, err := locks.Acquire(ctx, "r", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.send(ctx, "script", "flush"); err != nil {
		t.Fatal(err)
	}
	if _, err := first.(*Lock).Release(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := locks.Inspect(ctx, "r")
	if err != nil || st != (Free{first.(*Lock).Fence()}) {
		t.Fatalf("inspect after flush: %#v %v", st, err)
	}
	loaded, err := c.send(ctx, "script", "exists", scripts.LockReleaseScript.SHA1, scripts.LockAcquireScript.SHA1)
	if err != nil || fmt.Sprint(loaded) != "[1 0]" { // release was reloaded; acquire was not called again
		t.Fatalf("script exists: %v %v", loaded, err)
	}
}
