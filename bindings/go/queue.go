package redisatomic

import (
	"context"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Queue is a reliable delayed job queue whose every claim is a fenced lease.
//
// Invariant: each job is in exactly one place (due, in flight, dead, or acked) and has at most
// one live lease; every lease of a job carries a fence larger than all earlier ones, and only
// the current fence can extend, ack or nack it, so a job is acked at most once.
//
// Keys (QueueKeys), all under the `{name}` tag: `<ns>:queue:v1:{name}:due` (zset id → due ms),
// `:inflight` (zset id → lease deadline), `:dead`, `:done` (ack tombstones for the dedup window),
// `:meta`, `:payload`, `:errors` (hashes by id), and per claim id `:claim:<digest>`. Mechanism:
// the queue_* scripts: one moves a batch from due to in flight, stamps fences and delivery
// counts, and returns the payloads; times are the server's clock.
//
// Retry: Claim is not retry-safe (a second run would lease other jobs; after an unknown outcome
// they come back when their TTL passes); ClaimWithID is (a repeat returns the same jobs);
// everything else is retry-safe. Not guaranteed: exactly-once processing (a worker paused past
// its lease may still be working when another gets the job: pass Job.Fence to its writes); a
// failover may lose moves not yet replicated.
type Queue struct {
	client *Client
	keys   QueueKeys
	config QueueConfig
}

// QueueKeys are every key of a queue.
type QueueKeys struct {
	Due, Inflight, Dead, Done, Meta, Payload, Errors, Claims string
}

// ClaimKey is the record of a claim id (1..=256 bytes) of ClaimWithID.
func (k QueueKeys) ClaimKey(claimID string) (string, error) {
	d, err := digest(claimID, 256, "claim id")
	if err != nil {
		return "", err
	}
	return k.Claims + ":" + d, nil
}

// QueueConfig are a queue's settings.
type QueueConfig struct {
	// MaxPayloadBytes bounds a payload (default 64 KiB, at most 1 MiB).
	MaxPayloadBytes int
	// MaxDeliveries: a job delivered this often and not acked is dead-lettered (default 5).
	MaxDeliveries uint32
	// DedupWindow: an acked job's id is remembered this long; enqueue answers Exists (default 24 h).
	DedupWindow time.Duration
	// MaxDeadLetters: the oldest dead letters beyond this are dropped (default 10 000).
	MaxDeadLetters uint32
	// DeadLetterRetention: dead letters older than this are dropped (default 7 days).
	DeadLetterRetention time.Duration
	// ClaimIDTTL: how long a claim id's record answers repeats (default 1 h, 1 s..=24 h).
	ClaimIDTTL time.Duration
}

// DefaultQueueConfig is the library's defaults.
func DefaultQueueConfig() QueueConfig {
	return QueueConfig{MaxPayloadBytes: 64 << 10, MaxDeliveries: 5, DedupWindow: 24 * time.Hour,
		MaxDeadLetters: 10_000, DeadLetterRetention: 7 * 24 * time.Hour, ClaimIDTTL: time.Hour}
}

const (
	maxQueueDelay = 365 * 24 * time.Hour
	maxJobTTL     = 24 * time.Hour
)

func (c QueueConfig) validate() error {
	switch {
	case c.ClaimIDTTL < time.Second || c.ClaimIDTTL > 24*time.Hour:
		return wrap(ErrBadArgument, nil, "claim_id_ttl must be 1 s ..= a day")
	case c.MaxDeadLetters == 0 || c.MaxDeadLetters > 1_000_000_000:
		return wrap(ErrBadArgument, nil, "max_dead_letters must be 1..=1000000000, got %d", c.MaxDeadLetters)
	case c.MaxDeliveries == 0:
		return wrap(ErrBadArgument, nil, "max_deliveries must be at least 1")
	case c.DeadLetterRetention < time.Millisecond || c.DeadLetterRetention > maxQueueDelay:
		return wrap(ErrBadArgument, nil, "dead_letter_retention must be 1 ms ..= a year")
	case c.MaxPayloadBytes < 0 || c.MaxPayloadBytes > 1<<20:
		return wrap(ErrBadArgument, nil, "max_payload_bytes must be at most %d, got %d", 1<<20, c.MaxPayloadBytes)
	case c.DedupWindow < 0 || c.DedupWindow > maxQueueDelay:
		return wrap(ErrBadArgument, nil, "dedup_window must be at most a year")
	}
	return nil
}

// NewQueue is the queue name under namespace with config (DefaultQueueConfig for the defaults).
func NewQueue(client *Client, namespace, name string, config QueueConfig) (*Queue, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	if err := config.validate(); err != nil {
		return nil, err
	}
	base, err := key(namespace, "queue", "1", name)
	if err != nil {
		return nil, err
	}
	k := func(part string) string { return base + ":" + part }
	return &Queue{client: client, config: config, keys: QueueKeys{Due: k("due"), Inflight: k("inflight"),
		Dead: k("dead"), Done: k("done"), Meta: k("meta"), Payload: k("payload"), Errors: k("errors"), Claims: k("claim")}}, nil
}

// Keys are the queue's keys.
func (q *Queue) Keys() QueueKeys { return q.keys }

// Config are the queue's settings.
func (q *Queue) Config() QueueConfig { return q.config }

func checkJobID(id string) error {
	if id == "" || len(id) > 256 {
		return wrap(ErrBadArgument, nil, "job id must be 1..=256 bytes, got %d", len(id))
	}
	return nil
}

func countArg(what string, n int) error {
	if n < 1 || n > maxBatch {
		return wrap(ErrBadArgument, nil, "%s must be 1..=%d, got %d", what, maxBatch, n)
	}
	return nil
}

func (q *Queue) deadBound() (int64, int64) {
	return int64(q.config.MaxDeadLetters), q.config.DeadLetterRetention.Milliseconds()
}

// EnqueueResult is what Enqueue answers: Enqueued or Exists.
type EnqueueResult interface {
	Outcome() string
	isEnqueue()
}

// Enqueued: the job is due in DueIn.
type Enqueued struct{ DueIn time.Duration }

// Exists: a job with this id is already queued, running, dead or acked (within the dedup
// window); nothing changed.
type Exists struct{ Status string }

// Outcome is "enqueued".
func (Enqueued) Outcome() string { return "enqueued" }

// Outcome is "exists".
func (Exists) Outcome() string { return "exists" }
func (Enqueued) isEnqueue()    {}
func (Exists) isEnqueue()      {}

// Enqueue adds job id with payload, due after delay (0: now; at most a year). Retry-safe: a
// repeat answers Exists.
func (q *Queue) Enqueue(ctx context.Context, id string, payload []byte, delay time.Duration) (EnqueueResult, error) {
	return q.enqueue(ctx, id, payload, delay.Milliseconds(), 0, delay)
}

// EnqueueAt adds job id due at a wall-clock instant (the server's clock decides when it is).
func (q *Queue) EnqueueAt(ctx context.Context, id string, payload []byte, at time.Time) (EnqueueResult, error) {
	ms := max(at.UnixMilli(), 1)
	if ms > 253_402_300_799_999 {
		return nil, wrap(ErrBadArgument, nil, "run_at beyond the year 9999")
	}
	return q.enqueue(ctx, id, payload, 0, ms, 0)
}

func (q *Queue) enqueue(ctx context.Context, id string, payload []byte, delayMs, atMs int64, delay time.Duration) (EnqueueResult, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	if len(payload) > q.config.MaxPayloadBytes {
		return nil, wrap(ErrBadArgument, nil, "payload is %d bytes, over the %d-byte limit", len(payload), q.config.MaxPayloadBytes)
	}
	if delay < 0 || delay > maxQueueDelay {
		return nil, wrap(ErrBadArgument, nil, "delay must be 0..=a year, got %v", delay)
	}
	reply, err := scripts.CallQueueEnqueue(ctx, q.client, scripts.QueueEnqueueKeys{Due: q.keys.Due, Meta: q.keys.Meta, Payload: q.keys.Payload},
		scripts.QueueEnqueueArgs{JobId: id, Payload: payload, DelayMs: delayMs, AtMs: atMs})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.QueueEnqueueEnqueued); ok {
		return Enqueued{DueIn: ms(r.DueInMs)}, nil
	}
	return Exists{Status: reply.(scripts.QueueEnqueueExists).Status}, nil
}

// Reaped counts the expired leases a Reap took back: Requeued, or Dead (out of deliveries).
type Reaped struct{ Requeued, Dead uint64 }

// Reap returns up to limit (1..=1000) expired leases to the queue (or the dead letters).
func (q *Queue) Reap(ctx context.Context, limit int) (Reaped, error) {
	if err := countArg("limit", limit); err != nil {
		return Reaped{}, err
	}
	maxDead, keep := q.deadBound()
	reply, err := scripts.CallQueueReap(ctx, q.client, scripts.QueueReapKeys{Inflight: q.keys.Inflight, Due: q.keys.Due,
		Dead: q.keys.Dead, Meta: q.keys.Meta, Payload: q.keys.Payload, Errors: q.keys.Errors},
		scripts.QueueReapArgs{Limit: limit, MaxDeliveries: q.config.MaxDeliveries, MaxDead: maxDead, KeepDeadMs: keep})
	if err != nil {
		return Reaped{}, replyError(err)
	}
	r := reply.(scripts.QueueReapReaped)
	return Reaped{Requeued: r.Requeued, Dead: r.Dead}, nil
}
