package redisatomic

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// hourLimiter is a one-limit limiter under "app": limit per hour by alg.
func hourLimiter(t *testing.T, c *Client, alg Algorithm, limit uint64) *RateLimiter {
	t.Helper()
	l, err := NewLimit(alg, limit, time.Hour)
	check(t, err)
	p, err := NewPolicy(l)
	check(t, err)
	rl, err := NewRateLimiter(c, "app", p)
	check(t, err)
	return rl
}

// oneInFlight is batching with one call per lane in flight, so a held slot makes every
// decision started meanwhile queue (heldLane).
func oneInFlight() Option {
	b := DefaultBatching()
	b.InFlight = 1
	return WithBatching(b)
}

// heldLane takes the only call slot of the default batch entry point's lane (slot 0: a
// standalone server), so the decisions started next wait in its queue; release sends them.
func heldLane(t *testing.T, c *Client) *lane {
	t.Helper()
	l := c.batcher.lane(scripts.BatchScript, 0)
	if !l.tryEnter(c.batcher.config.InFlight) {
		t.Fatal("the lane's slot is busy")
	}
	return l
}

// queued waits until n decisions wait in l's queue (they were started on goroutines).
func queued(ctx context.Context, t *testing.T, l *lane, n int) {
	t.Helper()
	for ctx.Err() == nil {
		l.mu.Lock()
		got := len(l.queue)
		l.mu.Unlock()
		if got >= n {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("fewer than %d decisions queued", n)
}

// idle waits until l's last drain has freed its slot (its callers have their replies a moment
// before).
func idle(ctx context.Context, t *testing.T, l *lane) {
	t.Helper()
	for ctx.Err() == nil {
		l.mu.Lock()
		busy := l.busy
		l.mu.Unlock()
		if busy == 0 {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("the lane's slot stayed busy")
}

// Decisions of every algorithm, and of a two-limit policy, queued together leave as batch calls
// (runs of different scripts in one call, variadic ones included) and each limiter admits
// exactly its limit.
func TestBatchExactlyLimitAdmitted(t *testing.T) {
	c, _ := connect(t, oneInFlight())
	ctx := testCtx(t)
	const limit, callers = 10, 25
	var limiters []*RateLimiter
	for _, alg := range Algorithms {
		limiters = append(limiters, hourLimiter(t, c, alg, limit))
	}
	wide, err := NewLimit(GCRA, 2*limit, time.Hour)
	check(t, err)
	wide, err = wide.Named("wide") // not the GCRA limiter's key
	check(t, err)
	narrow, err := NewLimit(FixedWindow, limit, time.Hour)
	check(t, err)
	narrow, err = narrow.Named("narrow")
	check(t, err)
	p, err := NewPolicy(wide, narrow)
	check(t, err)
	rl, err := NewRateLimiter(c, "app", p)
	check(t, err)
	limiters = append(limiters, rl)

	lane := heldLane(t, c)
	admitted := make([]atomic.Int64, len(limiters))
	var wg sync.WaitGroup
	for range callers {
		for i, rl := range limiters {
			wg.Go(func() {
				d, err := rl.Consume(ctx, "user-1", 1)
				if err != nil {
					t.Error(err)
				} else if d.IsAllowed() {
					admitted[i].Add(1)
				}
			})
		}
	}
	total := callers * len(limiters)
	queued(ctx, t, lane, total)
	lane.release(c)
	wg.Wait()
	for i := range limiters {
		if n := admitted[i].Load(); n != limit {
			t.Errorf("limiter %d admitted %d, want %d", i, n, limit)
		}
	}
	s := c.BatchStats()
	if s.Batched != uint64(total) || s.Batches < uint64(total/64) || s.Alone != 0 {
		t.Fatalf("want %d decisions in batch calls of at most 64: %+v", total, s)
	}
}

// One decision's bad argument and another's wrong-typed key are their own errors; the other
// decisions of the same batches are decided.
func TestBatchBadMemberFailsAlone(t *testing.T) {
	c, _ := connect(t, oneInFlight())
	ctx := testCtx(t)
	check(t, c.Redis().LPush(ctx, "{b}:list", "x").Err())
	good := []any{1, 5, 60_000_000, 5, ""}
	calls := []struct {
		key  string
		args []any
	}{
		{"{a}:ok1", good},
		{"{a}:bad", []any{1, "many", 60_000_000, 5, ""}},
		{"{b}:list", good},
		{"{a}:ok2", good},
		{"{a}:ok3", good},
		{"{a}:ok4", good},
	}
	lane := heldLane(t, c)
	errs := make([]error, len(calls))
	raws := make([]any, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { raws[i], errs[i] = c.Run(ctx, scripts.RlGcraScript, []string{call.key}, call.args) })
	}
	queued(ctx, t, lane, len(calls))
	lane.release(c)
	wg.Wait()
	if !errors.Is(errs[1], ErrBadArgument) || !errors.Is(errs[2], ErrWrongType) {
		t.Fatalf("want bad_argument and wrong_type: %v, %v", errs[1], errs[2])
	}
	for _, i := range []int{0, 3, 4, 5} {
		reply, err := scripts.DecodeRlGcra(raws[i])
		if errs[i] != nil || err != nil || reply.Outcome() != "allowed" {
			t.Fatalf("decision %d: %v %v %v", i, reply, errs[i], err)
		}
	}
	if s := c.BatchStats(); s.Batches != 2 || s.Batched != 6 {
		t.Fatalf("want two batches of 3 (half of what waits, at least 3): %+v", s)
	}
}

// A batch whose reply is dropped after the server ran it: no member that is not retry-safe
// (quota_add) is resent — each ran once, and each in the dropped batch answers an unknown
// outcome that says so — while the retry-safe member (a lock acquire with the caller's token) is
// resent by this module if it was in it, and succeeds. Four wait: a batch of three (the one
// dropped) and one call alone; which three is up to the scheduler, the invariants are not.
func TestBatchDroppedAfterWriteRanOnce(t *testing.T) {
	srv := testserverStart(t)
	ctx := testCtx(t)
	direct := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket})
	defer func() { _ = direct.Close() }()
	check(t, direct.ScriptLoad(ctx, scripts.BatchScript.Body).Err())
	proxy := startDropProxy(t, srv, scripts.BatchScript.SHA1)
	user := redis.NewClient(&redis.Options{Addr: proxy.addr()}) // go-redis defaults: resends on
	defer func() { _ = user.Close() }()
	c := New(user, oneInFlight())
	locks := newLocks(t, c)

	lane := heldLane(t, c)
	const unsafe = 3
	errs := make([]error, unsafe)
	var wg sync.WaitGroup
	for i := range unsafe {
		wg.Go(func() {
			_, errs[i] = scripts.CallQuotaAdd(ctx, c, scripts.QuotaAddKeys{Counter: "{q}:n"},
				scripts.QuotaAddArgs{Delta: 1, Min: 0, Max: 100, Mode: "refuse", TtlMs: 0})
		})
	}
	var lock AcquireResult
	var lockErr error
	wg.Go(func() { lock, lockErr = locks.Acquire(ctx, "r", 5*time.Second, WithToken("tok")) })
	queued(ctx, t, lane, unsafe+1)
	lane.release(c)
	wg.Wait()
	unknown := 0
	for i, err := range errs {
		var u *OutcomeUnknownError
		switch {
		case err == nil:
		case errors.As(err, &u) && !u.RetrySafe && u.Attempts == 1:
			unknown++
		default:
			t.Fatalf("member %d: want success or an unknown outcome, not retry-safe, after 1 attempt: %v", i, err)
		}
	}
	if n, err := direct.Get(ctx, "{q}:n").Int(); err != nil || n != unsafe {
		t.Fatalf("the unsafe members ran %d times in all (%v), want %d", n, err, unsafe)
	}
	if lockErr != nil || lock.Outcome() != "acquired" {
		t.Fatalf("the retry-safe member: %v %v", lock, lockErr)
	}
	if s := c.BatchStats(); s.Batches != 1 || s.Batched != 3 || unknown < 2 {
		t.Fatalf("want one dropped batch of 3 with at least 2 unsafe members: %+v, %d unknown", s, unknown)
	}
}

// With batching off nothing queues: every decision is a call of its own.
func TestBatchingOff(t *testing.T) {
	c, _ := connect(t, WithBatching(NoBatching()))
	ctx := testCtx(t)
	rl := hourLimiter(t, c, GCRA, 5)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := rl.Consume(ctx, "u", 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if s := c.BatchStats(); s != (BatchStats{}) {
		t.Fatalf("batching off counted %+v", s)
	}
}
