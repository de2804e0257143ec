package redisatomic

import (
	"context"
	"strconv"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Quotas are counters with bounds, each on the weakest mechanism that keeps its invariant: a
// bounded counter never leaves [min, max]; a counter's TTL, once set, is never extended by later
// adds; ExtendTTL only moves expiry later; Raise never decreases; AddUnlessSmaller never lowers
// a score.
//
// Keys (Quotas.Keys): `<ns>:quota:v1:{<name>}` (the name is the tag, readable), and per request
// id `<ns>:quota:v1:{<name>}:req:<digest>`. Mechanisms: Add is the quota_add script (INCRBY
// cannot refuse to pass a bound; PEXPIRE NX inside sets the TTL on the first write only);
// ExpireOnce is PEXPIRE NX, ExtendTTL PEXPIRE GT, Raise the quota_max script, AddUnlessSmaller
// ZADD GT CH.
//
// Retry: Add is not retry-safe (a resend adds twice) and never resent after an unknown outcome;
// AddWithID records its answer for the request TTL (1 h by default) and is resent; everything
// else is idempotent and resent. Not guaranteed: values beyond ±(2^53-1) are refused;
// replication is asynchronous (a failover may lose the latest writes).
type Quotas struct {
	client     *Client
	namespace  string
	requestTTL time.Duration
}

// QuotaKeys are a counter's key, and a request id's record ("" without one).
type QuotaKeys struct{ Value, Request string }

// Bounds of quota values and settings.
const (
	MaxQuotaValue = 1<<53 - 1
	maxQuotaTTL   = 366 * 24 * time.Hour
	maxBatch      = 1000
)

// NewQuotas are the counters under namespace (request ids remembered 1 h).
func NewQuotas(client *Client, namespace string) (*Quotas, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return &Quotas{client: client, namespace: namespace, requestTTL: time.Hour}, nil
}

// WithRequestTTL remembers request ids for ttl (1 s..=24 h).
func (q *Quotas) WithRequestTTL(ttl time.Duration) (*Quotas, error) {
	if ttl < time.Second || ttl > 24*time.Hour {
		return nil, wrap(ErrBadArgument, nil, "request ttl must be 1 s ..= 1 day, got %v", ttl)
	}
	c := *q
	c.requestTTL = ttl
	return &c, nil
}

// RequestTTL is how long a request id is remembered.
func (q *Quotas) RequestTTL() time.Duration { return q.requestTTL }

// Keys are name's key, and with a request id (at most one, 1..=256 bytes) its record's.
func (q *Quotas) Keys(name string, requestID ...string) (QuotaKeys, error) {
	value, err := key(q.namespace, "quota", "1", name)
	if err != nil {
		return QuotaKeys{}, err
	}
	if len(requestID) == 0 {
		return QuotaKeys{Value: value}, nil
	}
	r, err := digest(requestID[0], maxRequestIDLen, "request id")
	if err != nil || len(requestID) > 1 {
		return QuotaKeys{}, wrap(ErrBadArgument, err, "one request id of 1..=%d bytes", maxRequestIDLen)
	}
	return QuotaKeys{Value: value, Request: value + ":req:" + r}, nil
}

// Bounds are a counter's [Min, Max].
type Bounds struct{ Min, Max int64 }

// NewBounds is [min, max] (-2^53 < min ≤ max < 2^53).
func NewBounds(min, max int64) (Bounds, error) {
	if min > max || min < -MaxQuotaValue || max > MaxQuotaValue {
		return Bounds{}, wrap(ErrBadArgument, nil, "bounds must satisfy -2^53 < min <= max < 2^53, got [%d, %d]", min, max)
	}
	return Bounds{min, max}, nil
}

// UpTo is [0, max].
func UpTo(max int64) (Bounds, error) { return NewBounds(0, max) }

// AddResult is what an add answers: Applied or Refused.
type AddResult interface {
	Outcome() string
	isAdd()
}

// Applied: the counter is now Value.
type Applied struct{ Value int64 }

// Refused: the add would leave the bounds; nothing changed; the counter is Value.
type Refused struct{ Value int64 }

// Outcome is "applied".
func (Applied) Outcome() string { return "applied" }

// Outcome is "refused".
func (Refused) Outcome() string { return "refused" }
func (Applied) isAdd()          {}
func (Refused) isAdd()          {}

// Add adds delta to name if the result stays within bounds (else Refused); ttl > 0 sets the
// counter's TTL on its first write only.
func (q *Quotas) Add(ctx context.Context, name string, delta int64, bounds Bounds, ttl time.Duration) (AddResult, error) {
	return q.add(ctx, name, delta, bounds, ttl, "refuse", nil)
}

// AddWithID is Add remembering requestID: a repeat answers the first answer and adds nothing
// (retry-safe).
func (q *Quotas) AddWithID(ctx context.Context, name string, delta int64, bounds Bounds, ttl time.Duration, requestID string) (AddResult, error) {
	return q.add(ctx, name, delta, bounds, ttl, "refuse", []string{requestID})
}

// AddClamped adds delta, stopping at the bound it would pass (Applied with the clamped value).
func (q *Quotas) AddClamped(ctx context.Context, name string, delta int64, bounds Bounds, ttl time.Duration) (AddResult, error) {
	return q.add(ctx, name, delta, bounds, ttl, "clamp", nil)
}

func (q *Quotas) add(ctx context.Context, name string, delta int64, b Bounds, ttl time.Duration, mode string, id []string) (AddResult, error) {
	if delta > MaxQuotaValue || delta < -MaxQuotaValue {
		return nil, wrap(ErrBadArgument, nil, "delta %d beyond ±(2^53 - 1)", delta)
	}
	if b.Min > b.Max {
		return nil, wrap(ErrBadArgument, nil, "bounds must satisfy min <= max, got [%d, %d]", b.Min, b.Max)
	}
	var ttlMs int64
	if ttl != 0 {
		var err error
		if ttlMs, err = millis("ttl", ttl, maxQuotaTTL); err != nil {
			return nil, err
		}
	}
	keys, err := q.Keys(name, id...)
	if err != nil {
		return nil, err
	}
	if keys.Request == "" {
		reply, err := scripts.CallQuotaAdd(ctx, q.client, scripts.QuotaAddKeys{Counter: keys.Value},
			scripts.QuotaAddArgs{Delta: delta, Min: b.Min, Max: b.Max, Mode: mode, TtlMs: ttlMs})
		if err != nil {
			return nil, replyError(err)
		}
		if r, ok := reply.(scripts.QuotaAddApplied); ok {
			return Applied{r.Value}, nil
		}
		return Refused{reply.(scripts.QuotaAddRefused).Value}, nil
	}
	reply, err := scripts.CallQuotaAddId(ctx, q.client, scripts.QuotaAddIdKeys{Counter: keys.Value, Request: keys.Request},
		scripts.QuotaAddIdArgs{Delta: delta, Min: b.Min, Max: b.Max, Mode: mode, TtlMs: ttlMs, RequestTtlMs: q.requestTTL.Milliseconds()})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.QuotaAddIdApplied); ok {
		return Applied{r.Value}, nil
	}
	return Refused{reply.(scripts.QuotaAddIdRefused).Value}, nil
}

// Get is name's value (0 when it does not exist).
func (q *Quotas) Get(ctx context.Context, name string) (int64, error) {
	keys, err := q.Keys(name)
	if err != nil {
		return 0, err
	}
	raw, err := q.client.idempotent(ctx, "get", keys.Value)
	if err != nil || raw == nil {
		return 0, err
	}
	s, _ := raw.(string)
	n, perr := strconv.ParseInt(s, 10, 64)
	if perr != nil {
		return 0, wrap(ErrWrongType, nil, "%q is not a counter", s)
	}
	return n, nil
}

// ExpireOnce sets name's TTL only if it has none (PEXPIRE NX): whether it was set.
func (q *Quotas) ExpireOnce(ctx context.Context, name string, ttl time.Duration) (bool, error) {
	return q.pexpire(ctx, name, ttl, "NX")
}

// ExtendTTL moves name's expiry to ttl from now only if that is later (PEXPIRE GT; a key
// without a TTL is left alone): whether it moved.
func (q *Quotas) ExtendTTL(ctx context.Context, name string, ttl time.Duration) (bool, error) {
	return q.pexpire(ctx, name, ttl, "GT")
}

func (q *Quotas) pexpire(ctx context.Context, name string, ttl time.Duration, option string) (bool, error) {
	ttlMs, err := millis("ttl", ttl, maxQuotaTTL)
	if err != nil {
		return false, err
	}
	keys, err := q.Keys(name)
	if err != nil {
		return false, err
	}
	raw, err := q.client.idempotent(ctx, "pexpire", keys.Value, ttlMs, option)
	return raw == int64(1), err
}

// RaiseResult is what Raise answers: Raised or Kept.
type RaiseResult interface {
	Outcome() string
	isRaise()
}

// Raised: the value is now the candidate.
type Raised struct{ Value int64 }

// Kept: the value was at least the candidate and stays Value.
type Kept struct{ Value int64 }

// Outcome is "raised".
func (Raised) Outcome() string { return "raised" }

// Outcome is "kept".
func (Kept) Outcome() string { return "kept" }
func (Raised) isRaise()      {}
func (Kept) isRaise()        {}

// Raise sets name to candidate if that is larger (a monotonic max).
func (q *Quotas) Raise(ctx context.Context, name string, candidate int64) (RaiseResult, error) {
	if candidate > MaxQuotaValue || candidate < -MaxQuotaValue {
		return nil, wrap(ErrBadArgument, nil, "candidate %d beyond ±(2^53 - 1)", candidate)
	}
	keys, err := q.Keys(name)
	if err != nil {
		return nil, err
	}
	reply, err := scripts.CallQuotaMax(ctx, q.client, scripts.QuotaMaxKeys{Value: keys.Value}, scripts.QuotaMaxArgs{Candidate: candidate})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.QuotaMaxRaised); ok {
		return Raised{r.Value}, nil
	}
	return Kept{reply.(scripts.QuotaMaxKept).Value}, nil
}

// Scored is one member of AddUnlessSmaller.
type Scored struct {
	Score  int64
	Member []byte
}

// AddUnlessSmaller sets each member's score in the sorted set `set` unless that would lower it
// (ZADD GT CH, 1..=1000 entries): how many changed.
func (q *Quotas) AddUnlessSmaller(ctx context.Context, set string, entries ...Scored) (int64, error) {
	if len(entries) == 0 || len(entries) > maxBatch {
		return 0, wrap(ErrBadArgument, nil, "a batch has 1..=%d entries, got %d", maxBatch, len(entries))
	}
	keys, err := q.Keys(set)
	if err != nil {
		return 0, err
	}
	args := []any{"zadd", keys.Value, "GT", "CH"}
	for _, e := range entries {
		if e.Score > MaxQuotaValue || e.Score < -MaxQuotaValue {
			return 0, wrap(ErrBadArgument, nil, "score %d beyond ±(2^53 - 1)", e.Score)
		}
		args = append(args, e.Score, e.Member)
	}
	raw, err := q.client.idempotent(ctx, args...)
	if err != nil {
		return 0, err
	}
	n, ok := raw.(int64)
	if !ok {
		return 0, wrap(ErrBadReply, nil, "ZADD: %T", raw)
	}
	return n, nil
}
