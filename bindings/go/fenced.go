package redisatomic

import (
	"context"
	"strconv"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// FencedWrites applies writes to state in Redis only for a fence at least the highest that
// wrote: once a write with fence f has applied to a resource, no write with a smaller fence
// applies to it again (within the fence record's retention). A zombie holder (paused past its
// lease) gets Stale and the newer holder's data stays.
//
// Keys (FencedWrites.Keys): `<ns>:fenced:v1:{resource}:fence` holds the highest fence that
// wrote; every target key must carry the `{resource}` tag (FencedWrites.Key builds such keys).
// Mechanism: one script, fenced_write: compare, apply the batch, record the fence, atomically;
// the whole batch is checked before the first write. Retry-safe: every write is idempotent and
// only the same fence can pass twice.
//
// Not guaranteed: a stale holder writing before the newer holder's first write still applies;
// reads are not fenced; after the retention without writes any fence is accepted again.
type FencedWrites struct {
	client    *Client
	namespace string
	retention time.Duration
}

// FencedKeys are a resource's fence record.
type FencedKeys struct{ Fence string }

// Bounds of FencedWrites.
const (
	maxRetention = 365 * 24 * time.Hour
	// MaxFence is the largest fence a write may carry (2^53 - 1: exact in Lua).
	MaxFence = 1<<53 - 1
)

// NewFencedWrites are fenced writes under namespace; the fence record is kept 7 days after the
// last write (WithRetention changes it).
func NewFencedWrites(client *Client, namespace string) (*FencedWrites, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return &FencedWrites{client: client, namespace: namespace, retention: 7 * 24 * time.Hour}, nil
}

// WithRetention keeps the fence record retention (1 ms..=365 days) after the last write.
func (f *FencedWrites) WithRetention(retention time.Duration) (*FencedWrites, error) {
	if _, err := millis("retention", retention, maxRetention); err != nil {
		return nil, err
	}
	c := *f
	c.retention = retention
	return &c, nil
}

// Keys are resource's fence record.
func (f *FencedWrites) Keys(resource string) (FencedKeys, error) {
	k, err := key(f.namespace, "fenced", "1", resource, "fence")
	return FencedKeys{Fence: k}, err
}

// Key is a data key of resource (`<ns>:fenced:v1:{resource}:data:<part>`), in its slot.
func (f *FencedWrites) Key(resource, part string) (string, error) {
	return key(f.namespace, "fenced", "1", resource, "data", part)
}

// FencedResult is what Write answers: Written or Stale.
type FencedResult interface {
	Outcome() string
	isFenced()
}

// Written (the outcome "applied"): the fence was at least the highest; Writes writes applied.
type Written struct {
	Fence  Fence
	Writes int
}

// Stale: a larger fence already wrote; nothing changed.
type Stale struct{ Highest Fence }

// Outcome is "applied" (spelled Written: Applied is a quota add's).
func (Written) Outcome() string { return "applied" }

// Outcome is "stale".
func (Stale) Outcome() string { return "stale" }
func (Written) isFenced()     {}
func (Stale) isFenced()       {}

// Write applies writes (1..=64, every key carrying `{resource}`) if fence (1..=2^53-1) is at
// least the highest that wrote to resource, all or none.
func (f *FencedWrites) Write(ctx context.Context, resource string, fence Fence, writes ...Write) (FencedResult, error) {
	if fence == 0 || fence > MaxFence {
		return nil, wrap(ErrBadArgument, nil, "fence must be in 1..=%d, got %d", uint64(MaxFence), fence)
	}
	record, err := f.Keys(resource)
	if err != nil {
		return nil, err
	}
	if err := checkBatch(writes); err != nil {
		return nil, err
	}
	keys := []string{record.Fence}
	var spec []any
	for _, w := range writes {
		if hashTag(w.key) != resource || hashTag(w.key) == w.key {
			return nil, wrap(ErrBadArgument, nil, "every key of a fenced write must carry the tag {%s}: %s", resource, w.key)
		}
		args, _ := w.command()
		keys = append(keys, w.key)
		spec = append(spec, w.op, len(args))
		for _, a := range args {
			spec = append(spec, a)
		}
	}
	retention, _ := millis("retention", f.retention, maxRetention)
	reply, err := scripts.CallFencedWrite(ctx, f.client, scripts.FencedWriteKeys{Fence: record.Fence, Target: keys[1:]},
		scripts.FencedWriteArgs{Fence: fenceArg(fence), RetentionMs: retention, Spec: spec})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.FencedWriteApplied:
		return Written{Fence: Fence(r.Fence), Writes: int(r.Writes)}, nil
	case scripts.FencedWriteStale:
		return Stale{Highest: Fence(r.Highest)}, nil
	}
	return nil, unexpected("fenced_write", reply)
}

// Highest is the highest fence that wrote to resource (0 if none is remembered): one GET,
// retried as any read.
func (f *FencedWrites) Highest(ctx context.Context, resource string) (Fence, error) {
	record, err := f.Keys(resource)
	if err != nil {
		return 0, err
	}
	raw, err := f.client.idempotent(ctx, "get", record.Fence)
	if err != nil || raw == nil {
		return 0, err
	}
	s, _ := raw.(string)
	n, perr := strconv.ParseUint(s, 10, 64)
	if perr != nil {
		return 0, wrap(ErrWrongType, nil, "fence record: %q is not a fence", s)
	}
	return Fence(n), nil
}

// idempotent sends one idempotent command (never a script: GET, PEXPIRE NX|GT, ZADD GT CH),
// retried after an unknown outcome too, within the retry policy (retrying, as every call).
func (c *Client) idempotent(ctx context.Context, args ...any) (any, error) {
	return c.retrying(ctx, true, func() (any, error) {
		if err := ctx.Err(); err != nil {
			return nil, wrap(ErrNotSent, err, "the context ended before sending: %v", err)
		}
		raw, err := c.send(ctx, args...)
		if err != nil {
			return nil, classify(ctx, err)
		}
		return raw, nil
	})
}
