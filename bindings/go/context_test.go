package redisatomic

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A context that ended before sending is ErrNotSent (nothing ran, safe to retry), for every
// kind of call: a script, an idempotent command, a CAS.
func TestContextEndedBeforeSendIsNotSent(t *testing.T) {
	c, locks, _ := lockFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l, _ := NewLimit(GCRA, 10, time.Second)
	p, _ := NewPolicy(l)
	rl, _ := NewRateLimiter(c, "app", p)
	q, _ := NewQuotas(c, "app")
	for name, err := range map[string]error{
		"lock":  second(locks.Acquire(ctx, "r", time.Second)),
		"rate":  second(rl.Consume(ctx, "k", 1)),
		"quota": second(q.Get(ctx, "n")),
		"cas":   second(NewCas(c).Update(ctx, []Read{ReadGet("k")}, nil)),
	} {
		if !errors.Is(err, ErrNotSent) || !errors.Is(err, context.Canceled) || !NothingRan(err) || !RetrySafe(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A stalled server (SIGSTOP): a consume sent to it ends at the context's deadline as an
// *OutcomeUnknownError that timed out and is not retry-safe (it may have charged); the same
// call with a request id is retry-safe.
func TestStalledServerOutcomeUnknown(t *testing.T) {
	srv := testserverStart(t)
	c, err := Connect(testCtx(t), srv.URL(), WithRetryPolicy(NoRetry()))
	check(t, err)
	defer func() { _ = c.Close() }()
	l, _ := NewLimit(TokenBucket, 10, time.Second)
	p, _ := NewPolicy(l)
	rl, _ := NewRateLimiter(c, "app", p)
	_, err = rl.Consume(testCtx(t), "k", 1) // loads the script
	check(t, err)
	_, err = rl.ConsumeWithID(testCtx(t), "k", 1, "warm")
	check(t, err)
	srv.Pause()
	defer srv.Resume()
	for _, id := range []string{"", "req-1"} {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		_, err = rl.ConsumeDetailed(ctx, "k", 1, id)
		cancel()
		var u *OutcomeUnknownError
		if !errors.As(err, &u) || !u.TimedOut || u.RetrySafe != (id != "") || Code(err) != "outcome_unknown" {
			t.Errorf("request id %q: %v (%+v)", id, err, u)
		}
	}
}
