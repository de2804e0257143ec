package redisatomic

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Exactly limit of many concurrent consumes are admitted, for every algorithm (a period far
// longer than the test, so nothing refills).
func TestRateLimitExactlyLimitAdmitted(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	const limit, callers = 50, 300
	for _, alg := range Algorithms {
		rl := hourLimiter(t, c, alg, limit)
		var admitted, refused atomic.Int64
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := rl.Consume(ctx, "user-1", 1)
				switch {
				case err != nil:
					t.Error(err)
				case d.IsAllowed():
					admitted.Add(1)
				case d.(Limited).RetryAfter <= 0:
					t.Errorf("%s: refused with retry after %v", alg, d.(Limited).RetryAfter)
				default:
					refused.Add(1)
				}
			}()
		}
		wg.Wait()
		if admitted.Load() != limit || refused.Load() != callers-limit {
			t.Errorf("%s: %d admitted, %d refused, want %d and %d", alg, admitted.Load(), refused.Load(), limit, callers-limit)
		}
	}
}

// A policy refused by one limit charges none: the other limit's remaining is unchanged.
func TestRateLimitRefusedPolicyChargesNothing(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	second, _ := NewLimit(FixedWindow, 3, time.Hour)
	second, _ = second.Named("per-hour")
	day, _ := NewLimit(SlidingWindow, 100, 24*time.Hour)
	day, _ = day.Named("per-day")
	p, err := NewPolicy(second, day)
	check(t, err)
	rl, err := NewRateLimiter(c, "app", p)
	check(t, err)
	for i := range 3 {
		v, err := rl.ConsumeDetailed(ctx, "k", 1, "")
		if err != nil || !v.Decision.IsAllowed() || v.Limits[1].Remaining != uint64(99-i) {
			t.Fatalf("consume %d: %#v %v", i, v, err)
		}
	}
	for range 20 {
		v, err := rl.ConsumeDetailed(ctx, "k", 1, "")
		if err != nil || v.Decision.IsAllowed() || v.Limits[1].Remaining != 97 || v.Limits[0].RetryAfter <= 0 {
			t.Fatalf("refused: %#v %v", v, err)
		}
	}
}

// A request id is charged once however often, and concurrently, it is repeated; the repeats are
// replays.
func TestRateLimitRequestIDOnce(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	l, _ := NewLimit(GCRA, 10, time.Hour)
	p, _ := NewPolicy(l)
	rl, err := NewRateLimiter(c, "app", p)
	check(t, err)
	var replays atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := rl.ConsumeDetailed(ctx, "k", 2, "req-1")
			if err != nil || !v.Decision.IsAllowed() {
				t.Errorf("%#v %v", v, err)
			}
			if v.Replayed {
				replays.Add(1)
			}
		}()
	}
	wg.Wait()
	if replays.Load() != 49 {
		t.Fatalf("%d replays, want 49", replays.Load())
	}
	d, err := rl.Consume(ctx, "k", 1)
	if err != nil || d.(Allowed).Remaining != 7 {
		t.Fatalf("after the repeated request: %#v %v (want 7 left: charged 2 once)", d, err)
	}
	keys, err := rl.Keys("k", "req-1")
	if err != nil || keys.Request == "" || len(keys.Limits) != 1 {
		t.Fatalf("keys %#v %v", keys, err)
	}
	if n, _ := c.Redis().Exists(ctx, keys.Request, keys.Limits[0]).Result(); n != 2 {
		t.Fatalf("%d of the keys exist, want 2", n)
	}
}

// Bad input is refused before anything is sent, with a message naming it.
func TestRateLimitBadArguments(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	gcra, _ := NewLimit(GCRA, 10, time.Second)
	gcra, _ = gcra.WithBurst(5)
	p, _ := NewPolicy(gcra)
	rl, _ := NewRateLimiter(c, "app", p)
	_, err := rl.Consume(ctx, "k", 6)
	var over *CostExceedsBurstError
	if !errors.As(err, &over) || over.Cost != 6 || over.Burst != 5 || Code(err) != "cost_exceeds_burst" || !NothingRan(err) {
		t.Fatalf("cost over burst: %v", err)
	}
	for name, err := range map[string]error{
		"zero limit":     second(NewLimit(FixedWindow, 0, time.Second)),
		"log too large":  second(NewLimit(SlidingLog, MaxLogLimit+1, time.Second)),
		"short period":   second(NewLimit(GCRA, 1, time.Microsecond)),
		"burst on fixed": second(second2(NewLimit(FixedWindow, 1, time.Second))),
		"bad name":       second(gcra.Named("a b")),
		"no limits":      second(NewPolicy()),
		"same names":     second(NewPolicy(gcra, gcra)),
		"zero cost":      second(rl.Consume(ctx, "k", 0)),
		"empty identity": second(rl.Consume(ctx, "", 1)),
		"empty id":       second(rl.ConsumeWithID(ctx, "k", 1, "")),
		"request ttl":    second(rl.WithRequestTTL(25 * time.Hour)),
		"algorithm":      second(ParseAlgorithm("leaky-bucket")),
	} {
		if !errors.Is(err, ErrBadArgument) || Code(err) != "bad_argument" {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, s := range []string{"token_bucket", "token-bucket"} {
		if a, err := ParseAlgorithm(s); err != nil || a != TokenBucket {
			t.Errorf("%s: %v %v", s, a, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// second2 applies WithBurst to a fixed window, the error it must give.
func second2(l Limit, _ error) (Limit, error) { return l.WithBurst(2) }
