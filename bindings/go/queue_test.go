package redisatomic

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Many workers drain a queue concurrently: every job is acked exactly once, no ack is Lost, and
// the stats end with every job acked.
func TestQueueEveryJobAckedOnce(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	q, err := NewQueue(c, "app", "emails", DefaultQueueConfig())
	check(t, err)
	const jobs = 300
	for i := range jobs {
		res, err := q.Enqueue(ctx, fmt.Sprintf("job-%d", i), []byte(fmt.Sprint(i)), 0)
		if err != nil || res.Outcome() != "enqueued" {
			t.Fatalf("enqueue %d: %#v %v", i, res, err)
		}
	}
	if res, err := q.Enqueue(ctx, "job-0", nil, 0); err != nil || res != (Exists{"queued"}) {
		t.Fatalf("duplicate enqueue: %#v %v", res, err)
	}
	var mu sync.Mutex
	acked := map[string]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("w%d", w)
			for {
				res, err := q.Claim(ctx, worker, time.Minute, 7)
				if err != nil {
					t.Error(err)
					return
				}
				claimed, ok := res.(Claimed)
				if !ok {
					return // Idle: every job is acked or leased to another worker
				}
				for _, j := range claimed.Jobs {
					if string(j.Payload()) != j.ID()[4:] || j.Token() != worker || j.Deliveries() != 1 {
						t.Errorf("job %s: payload %q token %s deliveries %d", j.ID(), j.Payload(), j.Token(), j.Deliveries())
					}
					if a, err := j.Ack(ctx); err != nil || a != (Acked{}) {
						t.Errorf("ack %s: %v %v", j.ID(), a, err)
					}
					mu.Lock()
					acked[j.ID()]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for i := range jobs {
		if n := acked[fmt.Sprintf("job-%d", i)]; n != 1 {
			t.Errorf("job-%d acked %d times", i, n)
		}
	}
	if st, err := q.Stats(ctx); err != nil || st != (QueueStats{Acked: jobs}) {
		t.Fatalf("stats %#v %v", st, err)
	}
}

// A job nacked until it runs out of deliveries is a dead letter; listed, requeued, acked; a
// stale fence cannot ack; a claim id repeated returns the same jobs.
func TestQueueDeadLettersAndClaimID(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	cfg := DefaultQueueConfig()
	cfg.MaxDeliveries = 2
	q, err := NewQueue(c, "app", "q", cfg)
	check(t, err)
	_, err = q.Enqueue(ctx, "j", []byte("p"), 0)
	check(t, err)
	first := claimOne(t, q, "w")
	if n, err := first.Nack(ctx, 0, "boom"); err != nil || n != (Retrying{}) {
		t.Fatalf("nack: %#v %v", n, err)
	}
	second := claimOne(t, q, "w")
	if second.Fence() <= first.Fence() || second.Deliveries() != 2 {
		t.Fatalf("second lease: fence %d after %d, deliveries %d", second.Fence(), first.Fence(), second.Deliveries())
	}
	if a, err := q.Ack(ctx, "j", "w", first.Fence()); err != nil || a != (Lost{}) {
		t.Fatalf("stale ack: %#v %v", a, err)
	}
	if n, err := second.Nack(ctx, 0, "boom again"); err != nil || n != (Dead{}) {
		t.Fatalf("last nack: %#v %v", n, err)
	}
	if st, err := q.Inspect(ctx, "j"); err != nil || st != (JobDead{2, "boom again"}) {
		t.Fatalf("inspect: %#v %v", st, err)
	}
	letters, err := q.DeadLetters(ctx, 0, 10)
	if err != nil || letters.Total != 1 || letters.Letters[0].ID != "j" {
		t.Fatalf("dead letters: %#v %v", letters, err)
	}
	if r, err := q.RequeueDead(ctx, "j", 0); err != nil || r != (Requeued{}) {
		t.Fatalf("requeue: %#v %v", r, err)
	}
	if r, err := q.RequeueDead(ctx, "j", 0); err != nil || r != (NotDead{}) {
		t.Fatalf("requeue twice: %#v %v", r, err)
	}
	a, err := q.ClaimWithID(ctx, "w", time.Minute, 5, "claim-1")
	check(t, err)
	b, err := q.ClaimWithID(ctx, "w", time.Minute, 5, "claim-1")
	check(t, err)
	ja, jb := a.(Claimed).Jobs, b.(Claimed).Jobs
	if len(ja) != 1 || len(jb) != 1 || ja[0].Fence() != jb[0].Fence() || ja[0].ID() != "j" {
		t.Fatalf("claim id repeated: %#v %#v", ja, jb)
	}
	if ack, err := ja[0].Ack(ctx); err != nil || ack != (Acked{}) {
		t.Fatalf("ack: %#v %v", ack, err)
	}
	if res, err := q.Claim(ctx, "w", time.Minute, 1); err != nil || res != (Idle{}) {
		t.Fatalf("after: %#v %v", res, err)
	}
	if p, err := q.PurgeDeadLetters(ctx, 0, 10); err != nil || p != (Purged{0, 0}) {
		t.Fatalf("purge: %#v %v", p, err)
	}
	if _, err := q.Claim(ctx, "", time.Minute, 1); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("empty worker: %v", err)
	}
	if _, err := q.Enqueue(ctx, "big", make([]byte, cfg.MaxPayloadBytes+1), 0); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("big payload: %v", err)
	}
}

func claimOne(t *testing.T, q *Queue, worker string) *Job {
	t.Helper()
	res, err := q.Claim(testCtx(t), worker, time.Minute, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := res.(Claimed)
	if !ok || len(c.Jobs) != 1 {
		t.Fatalf("claim: %#v", res)
	}
	return c.Jobs[0]
}
