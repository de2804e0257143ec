package redisatomic

import (
	"context"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// QueueStats counts a queue's jobs by place: Ready (due now), Scheduled (due later), Running
// (leased), Expired (leases past their deadline, not yet taken back), Dead, Acked (tombstones).
type QueueStats struct {
	Ready, Scheduled, Running, Expired, Dead, Acked uint64
}

// Stats counts the queue's jobs (read only).
func (q *Queue) Stats(ctx context.Context) (QueueStats, error) {
	reply, err := scripts.CallQueueStats(ctx, q.client, scripts.QueueStatsKeys{Due: q.keys.Due, Inflight: q.keys.Inflight,
		Dead: q.keys.Dead, Done: q.keys.Done}, scripts.QueueStatsArgs{})
	if err != nil {
		return QueueStats{}, replyError(err)
	}
	r := reply.(scripts.QueueStatsStats)
	return QueueStats{r.Ready, r.Scheduled, r.Running, r.Expired, r.Dead, r.Acked}, nil
}

// JobState is what Inspect answers: JobQueued, JobRunning, JobDead, JobAcked or JobUnknown.
type JobState interface {
	Outcome() string
	isJobState()
}

// JobQueued: due in DueIn, after Deliveries leases, the last with LastFence.
type JobQueued struct {
	DueIn      time.Duration
	Deliveries uint64
	LastFence  Fence
}

// JobRunning: leased to Worker with Fence for TTL more.
type JobRunning struct {
	Fence      Fence
	Deliveries uint64
	TTL        time.Duration
	Worker     string
}

// JobDead: a dead letter after Deliveries leases; Error is the last error.
type JobDead struct {
	Deliveries uint64
	Error      string
}

// JobAcked: acked (within the dedup window) by the lease with Fence.
type JobAcked struct{ Fence Fence }

// JobUnknown: no such job (never enqueued, or acked and forgotten).
type JobUnknown struct{}

// Outcome is "queued".
func (JobQueued) Outcome() string { return "queued" }

// Outcome is "running".
func (JobRunning) Outcome() string { return "running" }

// Outcome is "dead".
func (JobDead) Outcome() string { return "dead" }

// Outcome is "acked".
func (JobAcked) Outcome() string { return "acked" }

// Outcome is "unknown".
func (JobUnknown) Outcome() string { return "unknown" }
func (JobQueued) isJobState()      {}
func (JobRunning) isJobState()     {}
func (JobDead) isJobState()        {}
func (JobAcked) isJobState()       {}
func (JobUnknown) isJobState()     {}

// Inspect reads job id's state (read only).
func (q *Queue) Inspect(ctx context.Context, id string) (JobState, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	reply, err := scripts.CallQueueInspect(ctx, q.client, scripts.QueueInspectKeys{Due: q.keys.Due, Inflight: q.keys.Inflight,
		Meta: q.keys.Meta, Errors: q.keys.Errors}, scripts.QueueInspectArgs{JobId: id})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.QueueInspectQueued:
		return JobQueued{ms(r.DueInMs), r.Deliveries, Fence(r.LastFence)}, nil
	case scripts.QueueInspectRunning:
		return JobRunning{Fence(r.Fence), r.Deliveries, ms(r.TtlMs), r.Worker}, nil
	case scripts.QueueInspectDead:
		return JobDead{r.Deliveries, r.Error}, nil
	case scripts.QueueInspectAcked:
		return JobAcked{Fence(r.Fence)}, nil
	}
	return JobUnknown{}, nil
}

// DeadLetter is one dead job.
type DeadLetter struct {
	ID         string
	DeadAtMs   uint64
	Deliveries uint64
	Error      string
}

// DeadLetters is one page of dead letters (oldest first) and how many there are.
type DeadLetters struct {
	Total   uint64
	Letters []DeadLetter
}

// DeadLetters lists count (1..=1000) dead letters from position start.
func (q *Queue) DeadLetters(ctx context.Context, start uint32, count int) (DeadLetters, error) {
	if err := countArg("count", count); err != nil {
		return DeadLetters{}, err
	}
	reply, err := scripts.CallQueueDeadList(ctx, q.client, scripts.QueueDeadListKeys{Dead: q.keys.Dead, Meta: q.keys.Meta, Errors: q.keys.Errors},
		scripts.QueueDeadListArgs{Start: start, Count: count})
	if err != nil {
		return DeadLetters{}, replyError(err)
	}
	r := reply.(scripts.QueueDeadListListed)
	out := DeadLetters{Total: r.Total}
	for _, l := range r.Letters {
		out.Letters = append(out.Letters, DeadLetter{l.Id, l.DeadAtMs, l.Deliveries, l.Error})
	}
	return out, nil
}

// RequeueResult is what RequeueDead answers: Requeued or NotDead.
type RequeueResult interface {
	Outcome() string
	isRequeue()
}

// Requeued: the dead job is due again (its deliveries start over).
type Requeued struct{}

// NotDead: no dead letter with that id; nothing changed.
type NotDead struct{}

// Outcome is "requeued".
func (Requeued) Outcome() string { return "requeued" }

// Outcome is "not_dead".
func (NotDead) Outcome() string { return "not_dead" }
func (Requeued) isRequeue()     {}
func (NotDead) isRequeue()      {}

// RequeueDead makes dead job id due again after delay (at most a year).
func (q *Queue) RequeueDead(ctx context.Context, id string, delay time.Duration) (RequeueResult, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	if delay < 0 || delay > maxQueueDelay {
		return nil, wrap(ErrBadArgument, nil, "delay must be 0..=a year, got %v", delay)
	}
	reply, err := scripts.CallQueueDeadRequeue(ctx, q.client, scripts.QueueDeadRequeueKeys{Dead: q.keys.Dead, Due: q.keys.Due,
		Meta: q.keys.Meta, Errors: q.keys.Errors}, scripts.QueueDeadRequeueArgs{JobId: id, DelayMs: delay.Milliseconds()})
	if err != nil {
		return nil, replyError(err)
	}
	if _, ok := reply.(scripts.QueueDeadRequeueRequeued); ok {
		return Requeued{}, nil
	}
	return NotDead{}, nil
}

// Purged counts the dead letters a purge removed and those left.
type Purged struct{ Purged, Remaining uint64 }

// PurgeDeadLetters removes up to limit (1..=1000) dead letters dead for longer than olderThan.
func (q *Queue) PurgeDeadLetters(ctx context.Context, olderThan time.Duration, limit int) (Purged, error) {
	if err := countArg("limit", limit); err != nil {
		return Purged{}, err
	}
	if olderThan < 0 || olderThan > maxQueueDelay {
		return Purged{}, wrap(ErrBadArgument, nil, "older_than must be 0..=a year, got %v", olderThan)
	}
	reply, err := scripts.CallQueueDeadPurge(ctx, q.client, scripts.QueueDeadPurgeKeys{Dead: q.keys.Dead, Meta: q.keys.Meta,
		Payload: q.keys.Payload, Errors: q.keys.Errors}, scripts.QueueDeadPurgeArgs{OlderThanMs: olderThan.Milliseconds(), Limit: limit})
	if err != nil {
		return Purged{}, replyError(err)
	}
	r := reply.(scripts.QueueDeadPurgePurged)
	return Purged{r.Purged, r.Remaining}, nil
}
