package redisatomic

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent adds against [0, 50]: exactly 50 apply, the counter ends at 50; a request id adds
// once however often it is sent.
func TestQuotaBoundedUnderConcurrency(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	q, err := NewQuotas(c, "app")
	check(t, err)
	b, err := UpTo(50)
	check(t, err)
	var applied atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := q.Add(ctx, "calls", 1, b, time.Hour)
			if err != nil {
				t.Error(err)
			} else if _, ok := res.(Applied); ok {
				applied.Add(1)
			}
		}()
	}
	wg.Wait()
	if v, err := q.Get(ctx, "calls"); applied.Load() != 50 || v != 50 || err != nil {
		t.Fatalf("%d applied, value %d %v", applied.Load(), v, err)
	}
	if res, err := q.Add(ctx, "calls", -60, b, 0); err != nil || res != (Refused{50}) {
		t.Fatalf("refund below 0: %#v %v", res, err)
	}
	if res, err := q.AddClamped(ctx, "calls", -60, b, 0); err != nil || res != (Applied{0}) {
		t.Fatalf("clamped: %#v %v", res, err)
	}
	for range 3 {
		if res, err := q.AddWithID(ctx, "ids", 5, b, 0, "req-1"); err != nil || res != (Applied{5}) {
			t.Fatalf("with id: %#v %v", res, err)
		}
	}
	keys, _ := q.Keys("ids", "req-1")
	if n, _ := c.Redis().Exists(ctx, keys.Value, keys.Request).Result(); n != 2 {
		t.Fatalf("keys %#v: %d exist", keys, n)
	}
}

// Raise never lowers; ExpireOnce sets a TTL once; ExtendTTL only moves it later; ZADD GT never
// lowers a score.
func TestQuotaRaiseAndTTLs(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	q, _ := NewQuotas(c, "app")
	if r, err := q.Raise(ctx, "hw", 10); err != nil || r != (Raised{10}) {
		t.Fatalf("%#v %v", r, err)
	}
	if r, err := q.Raise(ctx, "hw", 5); err != nil || r != (Kept{10}) {
		t.Fatalf("%#v %v", r, err)
	}
	if ok, err := q.ExpireOnce(ctx, "hw", time.Hour); !ok || err != nil {
		t.Fatalf("expire once: %v %v", ok, err)
	}
	if ok, err := q.ExpireOnce(ctx, "hw", time.Minute); ok || err != nil {
		t.Fatalf("expire twice: %v %v", ok, err)
	}
	if ok, err := q.ExtendTTL(ctx, "hw", time.Minute); ok || err != nil {
		t.Fatalf("extend shorter: %v %v", ok, err)
	}
	if ok, err := q.ExtendTTL(ctx, "hw", 2*time.Hour); !ok || err != nil {
		t.Fatalf("extend longer: %v %v", ok, err)
	}
	if n, err := q.AddUnlessSmaller(ctx, "scores", Scored{5, []byte("a")}, Scored{7, []byte("b")}); n != 2 || err != nil {
		t.Fatalf("zadd: %d %v", n, err)
	}
	if n, err := q.AddUnlessSmaller(ctx, "scores", Scored{1, []byte("a")}, Scored{9, []byte("b")}); n != 1 || err != nil {
		t.Fatalf("zadd gt: %d %v", n, err)
	}
	keys, _ := q.Keys("scores")
	if s, _ := c.Redis().ZScore(ctx, keys.Value, "a").Result(); s != 5 {
		t.Fatalf("a lowered to %v", s)
	}
	for name, err := range map[string]error{
		"bounds":  second(NewBounds(2, 1)),
		"delta":   second(q.Add(ctx, "x", MaxQuotaValue+1, Bounds{0, 1}, 0)),
		"ttl":     second(q.ExpireOnce(ctx, "x", 0)),
		"empty":   second(q.AddUnlessSmaller(ctx, "x")),
		"no id":   second(q.AddWithID(ctx, "x", 1, Bounds{0, 1}, 0, "")),
		"req ttl": second(q.WithRequestTTL(time.Millisecond)),
	} {
		if !errors.Is(err, ErrBadArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
