package redisatomic

// Natural batching: decisions that queue up for the same node leave together as one call.
//
// Why: on a server-bound workload every script call pays the server a fixed overhead (read,
// parse, find the script, set up KEYS and ARGV, write the reply) on top of its body, and a
// short decision (a rate limit, a lock) is mostly overhead. The generated layer carries, for
// every script whose header says `--- batch: yes`, a batch entry point built from the same
// bodies (scripts.Batches): it runs several decisions in order in one call and answers one reply
// per decision, each exactly what its own call would have answered at its place in the order.
//
// The rule is the Rust library's, per lane (one batch entry point on one node; on a cluster, one
// slot, since a batch's keys share a slot):
//
//   - a decision that finds fewer than Batching.InFlight calls of its lane in flight goes out at
//     once, alone, exactly as without batching: no timer, no added latency at low load;
//   - otherwise it waits; when a call of the lane finishes, the waiting decisions leave together
//     (at most MaxDecisions and MaxBytes) as one call of the entry point, or, fewer than
//     MinBatch of them, as separate calls.
//
// Everything else stays per decision: its retry loop (Client.Run judges each decision's own
// error by its own script's retry class, so a batch whose reply is lost never resends a member
// that is not retry-safe), its typed reply and its own error (one decision's bad argument is its
// element of the batch's reply). A decision whose context ends while it still waits was never
// sent (ErrNotSent); once its batch left, its outcome is unknown.

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// Batching says how decisions of batchable scripts may leave together (WithBatching).
type Batching struct {
	// Enabled: on by default; off, every decision is a call of its own.
	Enabled bool
	// InFlight is how many calls of one lane are in flight before a new decision waits for one
	// of them to finish instead of going out at once (at least 1).
	InFlight int
	// MaxDecisions bounds the decisions of one batch call.
	MaxDecisions int
	// MaxBytes bounds the bytes of keys and arguments of one batch call (a larger decision
	// still goes, alone).
	MaxBytes int
	// MinBatch is the fewest waiting decisions that leave as one batch call; fewer leave as
	// separate calls (a batch that small costs the server more than the calls it replaces).
	MinBatch int
}

// DefaultBatching is the library's: on, 4 calls in flight per lane, batches of 3 to 64
// decisions and at most 256 KiB.
func DefaultBatching() Batching {
	return Batching{Enabled: true, InFlight: 4, MaxDecisions: 64, MaxBytes: 256 << 10, MinBatch: 3}
}

// NoBatching sends every decision as a call of its own.
func NoBatching() Batching {
	b := DefaultBatching()
	b.Enabled = false
	return b
}

// WithBatching replaces DefaultBatching (NoBatching turns it off).
func WithBatching(b Batching) Option {
	return func(c *Client) {
		b.InFlight = max(b.InFlight, 1)
		b.MaxDecisions = max(b.MaxDecisions, 1)
		b.MinBatch = max(b.MinBatch, 2)
		c.batcher = newBatcher(b)
	}
}

// BatchStats is what a client's batching did so far (Client.BatchStats).
type BatchStats struct {
	// Decisions of batchable scripts, however they left.
	Decisions uint64
	// Alone: of those, decisions that found a call slot free and went out at once, alone.
	Alone uint64
	// Batches: batch calls sent.
	Batches uint64
	// Batched: decisions that left in those batch calls.
	Batched uint64
	// Separate: decisions that waited and left as separate calls (too few, or too large).
	Separate uint64
}

// MeanBatch is the mean decisions per batch call (0 without any).
func (s BatchStats) MeanBatch() float64 {
	if s.Batches == 0 {
		return 0
	}
	return float64(s.Batched) / float64(s.Batches)
}

// BatchStats is what this client's batching did so far (zeros with batching off).
func (c *Client) BatchStats() BatchStats {
	b := c.batcher
	return BatchStats{Decisions: b.decisions.Load(), Alone: b.alone.Load(),
		Batches: b.batches.Load(), Batched: b.batched.Load(), Separate: b.separate.Load()}
}

// batcher is a client's lanes and counters.
type batcher struct {
	config                                       Batching
	mu                                           sync.Mutex
	lanes                                        map[laneKey]*lane
	decisions, alone, batches, batched, separate atomic.Uint64
	workers                                      workers
}

// workers run the sends of waiting decisions on goroutines that stay a while for the next one:
// a fresh goroutine would grow its stack through go-redis's call path every time.
type workers struct{ jobs chan func() }

// workerIdle is how long an idle worker waits for the next job before it ends.
const workerIdle = time.Second

// run hands job to an idle worker, or starts one.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.loop(job)
	}
}

func (w *workers) loop(job func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		job()
		idle.Reset(workerIdle)
		select {
		case job = <-w.jobs:
		case <-idle.C:
			return
		}
	}
}

type laneKey struct {
	batch *scripts.ScriptDef
	slot  uint16
}

func newBatcher(config Batching) *batcher {
	return &batcher{config: config, lanes: map[laneKey]*lane{}, workers: workers{jobs: make(chan func())}}
}

func (b *batcher) lane(batch *scripts.ScriptDef, slot uint16) *lane {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := laneKey{batch, slot}
	l := b.lanes[k]
	if l == nil {
		l = &lane{batch: batch}
		b.lanes[k] = l
	}
	return l
}

// batchOf is the batch entry point def may ride in with this client's settings, if any: a
// built-in batchable script (a script of the user's own library never is).
func (c *Client) batchOf(def *scripts.ScriptDef) *scripts.ScriptDef {
	if !c.batcher.config.Enabled || !def.Batchable {
		return nil
	}
	batch := scripts.Batches[def.Name]
	if batch == nil || batch.Library != def.Library {
		return nil
	}
	return batch
}

// laneSlot is the slot of a decision's lane: its keys' slot on a cluster, else 0.
func (c *Client) laneSlot(keys []string) uint16 {
	if _, ok := c.rdb.(*redis.ClusterClient); ok && len(keys) > 0 {
		return Slot(keys[0])
	}
	return 0
}
