package redisatomic

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// ClaimResult is what Queue.Claim answers: Claimed, Empty or Idle.
type ClaimResult interface {
	Outcome() string
	isClaim()
}

// Claimed: Jobs are leased to the worker (1..=max jobs).
type Claimed struct{ Jobs []*Job }

// Empty: nothing is due; something is queued or running (the next due or lease end in
// RetryAfter).
type Empty struct{ RetryAfter time.Duration }

// Idle: nothing is queued or running.
type Idle struct{}

// Outcome is "claimed".
func (Claimed) Outcome() string { return "claimed" }

// Outcome is "empty".
func (Empty) Outcome() string { return "empty" }

// Outcome is "idle".
func (Idle) Outcome() string { return "idle" }
func (Claimed) isClaim()     {}
func (Empty) isClaim()       {}
func (Idle) isClaim()        {}

// Job is a leased job: ID, Payload, Deliveries, ClaimedAtMs and the lease (Fence, Token — the
// worker —, TTL, ExpiresBy, Extend, Watch), and Ack or Nack, which end the handle. A watched job
// is not given back after an unconfirmed loss: its worker may have done it and be about to ack.
type Job struct {
	lease
	queue      *Queue
	id         string
	payload    []byte
	deliveries uint32
	claimedAt  uint64
}

// ID is the job's id.
func (j *Job) ID() string { return j.id }

// Payload is the job's payload.
func (j *Job) Payload() []byte { return j.payload }

// Deliveries counts the job's leases, this one included.
func (j *Job) Deliveries() uint32 { return j.deliveries }

// ClaimedAtMs is the server's clock (ms since the epoch) when this lease began.
func (j *Job) ClaimedAtMs() uint64 { return j.claimedAt }

// Ack marks the job done (only its current lease can) and ends the handle.
func (j *Job) Ack(ctx context.Context) (AckResult, error) {
	if err := j.end("ack"); err != nil {
		return nil, err
	}
	return j.queue.Ack(ctx, j.id, j.token, j.fence)
}

// Nack gives the job back: due again after retryAfter, or dead-lettered with errText when it
// is out of deliveries; ends the handle.
func (j *Job) Nack(ctx context.Context, retryAfter time.Duration, errText string) (NackResult, error) {
	if err := j.end("nack"); err != nil {
		return nil, err
	}
	return j.queue.Nack(ctx, j.id, j.token, j.fence, retryAfter, errText)
}

// Claim leases up to maxJobs (1..=1000) due jobs to worker (1..=128 bytes) for ttl (≤ 24 h).
// Not retry-safe: ClaimWithID is.
func (q *Queue) Claim(ctx context.Context, worker string, ttl time.Duration, maxJobs int) (ClaimResult, error) {
	ttlMs, maxDead, keep, err := q.claimArgs(worker, ttl, maxJobs)
	if err != nil {
		return nil, err
	}
	sent := time.Now()
	reply, err := scripts.CallQueueClaim(ctx, q.client, scripts.QueueClaimKeys{Due: q.keys.Due, Inflight: q.keys.Inflight,
		Dead: q.keys.Dead, Meta: q.keys.Meta, Payload: q.keys.Payload, Errors: q.keys.Errors},
		scripts.QueueClaimArgs{Worker: worker, TtlMs: ttlMs, MaxJobs: maxJobs, MaxDeliveries: q.config.MaxDeliveries, MaxDead: maxDead, KeepDeadMs: keep})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.QueueClaimClaimed:
		jobs := make([]*Job, 0, len(r.Jobs))
		for _, it := range r.Jobs {
			jobs = append(jobs, q.job(worker, it.Id, Fence(it.Fence), it.Deliveries, it.Payload, r.NowMs, sent, ttl))
		}
		return Claimed{Jobs: jobs}, nil
	case scripts.QueueClaimEmpty:
		return Empty{RetryAfter: ms(r.RetryAfterMs)}, nil
	}
	return Idle{}, nil
}

// ClaimWithID is Claim recorded under claimID: a repeat (after a lost reply) leases nothing and
// returns the same jobs, fences and delivery counts while those leases are live. Retry-safe.
func (q *Queue) ClaimWithID(ctx context.Context, worker string, ttl time.Duration, maxJobs int, claimID string) (ClaimResult, error) {
	ttlMs, maxDead, keep, err := q.claimArgs(worker, ttl, maxJobs)
	if err != nil {
		return nil, err
	}
	record, err := q.keys.ClaimKey(claimID)
	if err != nil {
		return nil, err
	}
	sent := time.Now()
	reply, err := scripts.CallQueueClaimId(ctx, q.client, scripts.QueueClaimIdKeys{Due: q.keys.Due, Inflight: q.keys.Inflight,
		Dead: q.keys.Dead, Meta: q.keys.Meta, Payload: q.keys.Payload, Errors: q.keys.Errors, Claim: record},
		scripts.QueueClaimIdArgs{Worker: worker, TtlMs: ttlMs, MaxJobs: maxJobs, MaxDeliveries: q.config.MaxDeliveries,
			MaxDead: maxDead, KeepDeadMs: keep, RequestTtlMs: q.config.ClaimIDTTL.Milliseconds()})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.QueueClaimIdClaimed:
		jobs := make([]*Job, 0, len(r.Jobs))
		for _, it := range r.Jobs {
			left := ms(it.TtlMs)
			at := r.NowMs + it.TtlMs - min(uint64(ttlMs), r.NowMs+it.TtlMs)
			jobs = append(jobs, q.job(worker, it.Id, Fence(it.Fence), it.Deliveries, it.Payload, at, sent, left))
		}
		return Claimed{Jobs: jobs}, nil
	case scripts.QueueClaimIdEmpty:
		return Empty{RetryAfter: ms(r.RetryAfterMs)}, nil
	}
	return Idle{}, nil
}

func (q *Queue) claimArgs(worker string, ttl time.Duration, maxJobs int) (ttlMs, maxDead, keep int64, err error) {
	if worker == "" || len(worker) > 128 {
		return 0, 0, 0, wrap(ErrBadArgument, nil, "worker must be 1..=128 bytes, got %d", len(worker))
	}
	if err = checkToken(worker); err != nil {
		return
	}
	if err = countArg("max_jobs", maxJobs); err != nil {
		return
	}
	if ttlMs, err = millis("ttl", ttl, maxJobTTL); err != nil {
		return
	}
	maxDead, keep = q.deadBound()
	return
}

func (q *Queue) job(worker, id string, fence Fence, deliveries uint64, payload []byte, at uint64, sent time.Time, ttl time.Duration) *Job {
	j := &Job{lease: newLease(worker, fence, sent, ttl), queue: q, id: id, payload: payload,
		deliveries: uint32(min(deliveries, 1<<32-1)), claimedAt: at}
	j.renew = func(ctx context.Context, ttl time.Duration) (ExtendResult, error) {
		return q.Extend(ctx, id, worker, fence, ttl)
	}
	return j
}

// Extend sets the lease of job id, leased to worker with fence, to end ttl from the server's
// now: the by-parts twin of Job.Extend.
func (q *Queue) Extend(ctx context.Context, id, worker string, fence Fence, ttl time.Duration) (ExtendResult, error) {
	ttlMs, err := millis("ttl", ttl, maxJobTTL)
	if err == nil {
		err = checkJobID(id)
	}
	if err != nil {
		return nil, err
	}
	reply, err := scripts.CallQueueExtend(ctx, q.client, scripts.QueueExtendKeys{Inflight: q.keys.Inflight, Meta: q.keys.Meta},
		scripts.QueueExtendArgs{JobId: id, Token: worker, Fence: fenceArg(fence), TtlMs: ttlMs})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.QueueExtendExtended); ok {
		return Extended{Fence: Fence(r.Fence), TTL: ms(r.TtlMs)}, nil
	}
	return Lost{}, nil
}

// AckResult is what an ack answers: Acked or Lost.
type AckResult interface {
	Outcome() string
	isAck()
}

// Acked: the job is done (a repeat within the dedup window answers Acked again).
type Acked struct{}

// Outcome is "acked".
func (Acked) Outcome() string { return "acked" }
func (Acked) isAck()          {}
func (Lost) isAck()           {}

// Ack marks job id done if worker holds its current lease with fence: the by-parts twin of
// Job.Ack.
func (q *Queue) Ack(ctx context.Context, id, worker string, fence Fence) (AckResult, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	reply, err := scripts.CallQueueAck(ctx, q.client, scripts.QueueAckKeys{Inflight: q.keys.Inflight, Meta: q.keys.Meta,
		Payload: q.keys.Payload, Errors: q.keys.Errors, Done: q.keys.Done},
		scripts.QueueAckArgs{JobId: id, Token: worker, Fence: fenceArg(fence), KeepMs: q.config.DedupWindow.Milliseconds()})
	if err != nil {
		return nil, replyError(err)
	}
	if _, ok := reply.(scripts.QueueAckAcked); ok {
		return Acked{}, nil
	}
	return Lost{}, nil
}

// NackResult is what a nack answers: Retrying, Dead or Lost.
type NackResult interface {
	Outcome() string
	isNack()
}

// Retrying: the job is due again in RetryAfter.
type Retrying struct{ RetryAfter time.Duration }

// Dead: the job was out of deliveries and is now a dead letter.
type Dead struct{}

// Outcome is "retrying".
func (Retrying) Outcome() string { return "retrying" }

// Outcome is "dead".
func (Dead) Outcome() string { return "dead" }
func (Retrying) isNack()     {}
func (Dead) isNack()         {}
func (Lost) isNack()         {}

// Nack gives job id back (due after retryAfter, at most a year; errText kept, cut to 4096
// bytes): the by-parts twin of Job.Nack.
func (q *Queue) Nack(ctx context.Context, id, worker string, fence Fence, retryAfter time.Duration, errText string) (NackResult, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	if retryAfter < 0 || retryAfter > maxQueueDelay {
		return nil, wrap(ErrBadArgument, nil, "retry_after must be 0..=a year, got %v", retryAfter)
	}
	cut := min(len(errText), 4096)
	for cut > 0 && cut < len(errText) && !utf8.RuneStart(errText[cut]) {
		cut--
	}
	maxDead, keep := q.deadBound()
	reply, err := scripts.CallQueueNack(ctx, q.client, scripts.QueueNackKeys{Inflight: q.keys.Inflight, Due: q.keys.Due,
		Dead: q.keys.Dead, Meta: q.keys.Meta, Payload: q.keys.Payload, Errors: q.keys.Errors},
		scripts.QueueNackArgs{JobId: id, Token: worker, Fence: fenceArg(fence), RetryAfterMs: retryAfter.Milliseconds(),
			MaxDeliveries: q.config.MaxDeliveries, Error: errText[:cut], MaxDead: maxDead, KeepDeadMs: keep})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.QueueNackRetrying:
		return Retrying{RetryAfter: ms(r.RetryAfterMs)}, nil
	case scripts.QueueNackDead:
		return Dead{}, nil
	}
	return Lost{}, nil
}
