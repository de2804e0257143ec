package redisatomic

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// RetryPolicy bounds the retries of one call: transient refusals (nothing ran) always, unknown
// outcomes only for a retry-safe script; full-jitter exponential backoff, every attempt inside
// Deadline (and the context's).
type RetryPolicy struct {
	MaxAttempts int
	Deadline    time.Duration
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
}

// DefaultRetryPolicy is the library's: 4 attempts within 3 s, backoff from 5 ms up to 250 ms.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, Deadline: 3 * time.Second,
		BaseBackoff: 5 * time.Millisecond, MaxBackoff: 250 * time.Millisecond}
}

// NoRetry never retries.
func NoRetry() RetryPolicy { return RetryPolicy{MaxAttempts: 1} }

// backoff is a full-jitter wait before attempt n+1 (n ≥ 1).
func (p RetryPolicy) backoff(n int) time.Duration {
	ceiling := p.MaxBackoff
	if n < 30 && p.BaseBackoff<<(n-1) < ceiling {
		ceiling = p.BaseBackoff << (n - 1)
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

// Run runs def (EVALSHA, or EVALSHA_RO for a read-only script; on NOSCRIPT one SCRIPT LOAD and
// one resend) under the client's retry policy and returns the raw reply. It implements the
// generated layer's Runner.
func (c *Client) Run(ctx context.Context, def *scripts.ScriptDef, keys []string, args []any) (any, error) {
	if err := sameSlot(keys); err != nil {
		return nil, err
	}
	return c.retrying(ctx, def.RetrySafe, func() (any, error) { return c.once(ctx, def, keys, args) })
}

// retrying is the one retry loop of every call (scripts through Run, idempotent commands through
// idempotent): attempt again after a refusal where nothing ran, and after an unknown outcome only
// when retrySafe, within the policy's attempts and deadline and the context. Its error is final's:
// the call's outcome stays unknown if any attempt may have run, even when a later one was refused.
func (c *Client) retrying(ctx context.Context, retrySafe bool, attempt func() (any, error)) (any, error) {
	deadline := time.Now().Add(c.policy.Deadline)
	var unknown *OutcomeUnknownError // the latest attempt that may have run
	timedOut := false
	for n := 1; ; n++ {
		raw, err := attempt()
		if err == nil {
			return raw, nil
		}
		var u *OutcomeUnknownError
		if errors.As(err, &u) {
			timedOut = timedOut || u.TimedOut
			unknown = u
		}
		retry := IsTransient(err) || (u != nil && retrySafe)
		c.refreshSlots(err)
		if !retry || n >= c.policy.MaxAttempts || !pause(ctx, c.policy.backoff(n), deadline) {
			return nil, final(err, unknown, n, timedOut, retrySafe)
		}
	}
}

// refreshSlots asks a cluster client for a fresh slot map after a refusal where nothing ran (a
// dead primary refuses the dial). go-redis reloads it on its own only for a command it may
// resend, and the module sends none that way: without this, a failed-over primary's slots stay
// unreachable until the periodic reload (ClusterStateReloadInterval, 60 s by default).
func (c *Client) refreshSlots(err error) {
	if cluster, ok := c.rdb.(*redis.ClusterClient); ok && IsTransient(err) {
		cluster.ReloadState(context.Background())
	}
}

// final is the call's error: an unknown outcome if any attempt may have run (with every
// attempt counted), else the last attempt's error.
func final(last error, unknown *OutcomeUnknownError, attempts int, timedOut, retrySafe bool) error {
	if unknown == nil {
		return last
	}
	return &OutcomeUnknownError{Reason: unknown.Reason, Attempts: attempts, TimedOut: timedOut,
		RetrySafe: retrySafe, cause: unknown.cause}
}

// pause waits d unless that passes the deadline or the context ends first (then false).
func pause(ctx context.Context, d time.Duration, deadline time.Time) bool {
	if time.Now().Add(d).After(deadline) {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// once is one attempt: in its lane's next batch when batching has one for def and calls of
// the lane are in flight (batch.go), else alone.
func (c *Client) once(ctx context.Context, def *scripts.ScriptDef, keys []string, args []any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, wrap(ErrNotSent, err, "the context ended before sending: %v", err)
	}
	if batch := c.batchOf(def); batch != nil {
		return c.batched(ctx, batch, def, keys, args)
	}
	return c.alone(ctx, def, keys, args)
}

// alone is one call of def: its key count, keys and arguments after the delivery's head.
func (c *Client) alone(ctx context.Context, def *scripts.ScriptDef, keys []string, args []any) (any, error) {
	tail := make([]any, 0, 1+len(keys)+len(args))
	tail = append(tail, len(keys))
	for _, k := range keys {
		tail = append(tail, k)
	}
	return c.invoke(ctx, def, append(tail, args...))
}

// classify sorts go-redis's error for a request handed to it, as the library's
// Error::from_redis: a server's error reply by its code; a failed dial or an exhausted pool
// sent nothing; this module's own error (a recovered panic) stays; a reply go-redis cannot
// parse is a bad reply; anything else (a timeout, a broken or closed connection, a context that
// ended while waiting) may have run.
func classify(ctx context.Context, err error) error {
	if Code(err) != "" {
		return err // already this module's (a recovered panic: guard.go)
	}
	if bad := malformed(err); bad != nil {
		return bad
	}
	var server redis.Error
	if errors.As(err, &server) && !isClientSide(err) {
		return classifyServerError(server.Error())
	}
	var op *net.OpError
	if (errors.As(err, &op) && op.Op == "dial") || errors.Is(err, redis.ErrPoolTimeout) {
		return wrap(ErrNotSent, err, "%v", err)
	}
	return &OutcomeUnknownError{Reason: err.Error(), Attempts: 1, TimedOut: isTimeout(err) || errors.Is(ctx.Err(), context.DeadlineExceeded), cause: err}
}

// isClientSide: go-redis's own errors that also satisfy redis.Error (the pool's), never a
// server's reply.
func isClientSide(err error) bool {
	return errors.Is(err, redis.ErrClosed) || strings.HasPrefix(err.Error(), "redis: ")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
