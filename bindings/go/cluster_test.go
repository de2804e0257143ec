package redisatomic

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
	"github.com/redis-atomic/redis-atomic/bindings/go/redisatomictest"
	"github.com/redis/go-redis/v9"
)

// On a cluster of 3 masters (go-redis's ClusterClient): every primitive runs where its keys'
// slot lives, the keys spread over every node, and the invariants hold as on one server.
func TestCluster(t *testing.T) {
	cluster := redisatomictest.StartCluster(t, 3)
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster.Addrs})
	defer func() { _ = rdb.Close() }()
	c := New(rdb)
	ctx := testCtx(t)
	locks, _ := NewLocks(c, "app")
	for i := range 30 {
		res, err := locks.Acquire(ctx, fmt.Sprintf("order-%d", i), 10*time.Second)
		if err != nil || res.Outcome() != "acquired" {
			t.Fatalf("acquire %d: %#v %v", i, res, err)
		}
		if rel, err := res.(*Lock).Release(ctx); err != nil || rel.Outcome() != "released" {
			t.Fatalf("release %d: %#v %v", i, rel, err)
		}
	}
	clusterRateLimit(t, ctx, c)
	clusterBatches(t, ctx, New(rdb, oneInFlight()))
	clusterQueueAndIdempotency(t, ctx, c)
	res, err := NewCas(c).Update(ctx, []Read{ReadGet("{acct}:n")}, func(s Snapshot) (CasDecision, error) {
		return CasCommit(WriteSet("{acct}:n", []byte("1"))), nil
	})
	if err != nil || res.Outcome() != "committed" {
		t.Fatalf("cas: %#v %v", res, err)
	}
	d, _ := NewDedup(c, "app")
	firsts, err := d.FirstSeenMany(ctx, []string{"a", "b", "c", "d", "e", "f"}, time.Minute)
	if err != nil || len(firsts) != 6 || !firsts[5] {
		t.Fatalf("dedup: %v %v", firsts, err)
	}
	for i, node := range cluster.Nodes {
		direct := redis.NewClient(&redis.Options{Network: "unix", Addr: node.Socket})
		n, err := direct.DBSize(ctx).Result()
		_ = direct.Close()
		if err != nil || n == 0 {
			t.Errorf("node %d holds %d keys (%v): the keys did not spread", i, n, err)
		}
	}
}

// A two-limit policy under concurrency on a cluster: exactly the smaller limit admitted.
func clusterRateLimit(t *testing.T, ctx context.Context, c *Client) {
	small, _ := NewLimit(SlidingWindow, 20, time.Hour)
	small, _ = small.Named("small")
	big, _ := NewLimit(GCRA, 1000, time.Hour)
	p, _ := NewPolicy(small, big)
	rl, _ := NewRateLimiter(c, "app", p)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if d, err := rl.Consume(ctx, "tenant-1", 1); err != nil {
				t.Error(err)
			} else if d.IsAllowed() {
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 20 {
		t.Fatalf("%d admitted, want 20", admitted.Load())
	}
}

func clusterQueueAndIdempotency(t *testing.T, ctx context.Context, c *Client) {
	q, _ := NewQueue(c, "app", "mail", DefaultQueueConfig())
	for i := range 10 {
		if _, err := q.Enqueue(ctx, "j"+strconv.Itoa(i), []byte("x"), 0); err != nil {
			t.Fatal(err)
		}
	}
	res, err := q.Claim(ctx, "w", time.Minute, 10)
	if err != nil || len(res.(Claimed).Jobs) != 10 {
		t.Fatalf("claim: %#v %v", res, err)
	}
	for _, j := range res.(Claimed).Jobs {
		if a, err := j.Ack(ctx); err != nil || a != (Acked{}) {
			t.Fatalf("ack: %v %v", a, err)
		}
	}
	idem, _ := NewIdempotency(c, "app")
	for i := range 10 {
		b, err := idem.Begin(ctx, "s", []byte(strconv.Itoa(i)), FingerprintOf([]byte("x")))
		if err != nil || b.Outcome() != "claimed" {
			t.Fatalf("begin %d: %#v %v", i, b, err)
		}
		if end, err := b.(*Claim).Complete(ctx, Response{Status: 200}); err != nil || end != (Stored{}) {
			t.Fatalf("complete %d: %v %v", i, end, err)
		}
	}
}

// Decisions wait per slot: two identities in different slots, three decisions each queued while
// each slot's lane is busy, leave as one batch per slot, each sent to its slot's node.
func clusterBatches(t *testing.T, ctx context.Context, c *Client) {
	rl := hourLimiter(t, c, GCRA, 10)
	identities := []string{"a", "b"}
	var lanes []*lane
	for _, id := range identities {
		keys, err := rl.Keys(id)
		check(t, err)
		l := c.batcher.lane(scripts.BatchScript, Slot(keys.Limits[0]))
		if !l.tryEnter(1) {
			t.Fatalf("lane of %s busy", id)
		}
		lanes = append(lanes, l)
	}
	if lanes[0] == lanes[1] {
		t.Fatal("the identities share a slot: pick two that do not")
	}
	var wg sync.WaitGroup
	for _, id := range identities {
		for range 3 {
			wg.Go(func() {
				if d, err := rl.Consume(ctx, id, 1); err != nil || !d.IsAllowed() {
					t.Errorf("%s: %v %v", id, d, err)
				}
			})
		}
	}
	for _, l := range lanes {
		queued(ctx, t, l, 3)
		l.release(c)
	}
	wg.Wait()
	if s := c.BatchStats(); s.Batches != 2 || s.Batched != 6 {
		t.Fatalf("want one batch of 3 per slot: %+v", s)
	}
}
