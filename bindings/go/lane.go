package redisatomic

// One lane: the calls in flight for one batch entry point on one node (or slot), and the
// decisions waiting for one of them to finish.
//
// A lane counts its busy call slots. A decision takes a free slot and goes alone, or queues.
// Whoever releases a slot first takes what is queued and, if anything, keeps the slot and hands
// the group to a drain goroutine, which sends it and then the next group, until the queue is
// empty and the slot is free again. So while the queue holds anything, a slot is busy and will
// take it: nothing waits for a timer, and nothing is left behind.
//
// A queued decision is an entry: its script, keys and arguments, and where its outcome goes. Its
// state is waiting, taken (on its way to the server) or abandoned (its caller stopped waiting:
// it is skipped, never sent); the caller's context ending tells the two apart: still waiting
// means nothing was sent (ErrNotSent), taken means the call may have run.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

const (
	waiting int32 = iota
	taken
	abandoned
)

type lane struct {
	batch *scripts.ScriptDef
	mu    sync.Mutex
	busy  int
	queue []*entry
}

// outcome is what a decision's caller gets: its raw reply, or its own error.
type outcome struct {
	raw any
	err error
}

type entry struct {
	def   *scripts.ScriptDef
	keys  []string
	args  []any
	bytes int
	solo  bool // too large for a batch: leaves as a call of its own
	state atomic.Int32
	reply chan outcome // buffered: delivering never blocks
}

// tryEnter takes a call slot if fewer than limit are busy.
func (l *lane) tryEnter(limit int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy < limit {
		l.busy++
		return true
	}
	return false
}

// enqueue queues e, unless a slot freed since tryEnter said none was: then the slot is taken
// and false says to go alone.
func (l *lane) enqueue(e *entry, limit int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy < limit {
		l.busy++
		return false
	}
	l.queue = append(l.queue, e)
	return true
}

// release frees a slot, or keeps it for what queued meanwhile and drains that.
func (l *lane) release(c *Client) {
	if group := l.next(c.batcher.config); group != nil {
		c.batcher.workers.run(func() { l.drain(c, group) })
	}
}

// next is the next group to send (the slot stays busy), or nil after freeing the slot.
func (l *lane) next(config Batching) []*entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	group := l.take(config)
	if group == nil {
		l.busy--
	}
	return group
}

// drain sends group, then every group that queued meanwhile, then frees the slot.
func (l *lane) drain(c *Client, group []*entry) {
	for group != nil {
		c.sendGroup(l.batch, group)
		group = l.next(c.batcher.config)
	}
}

// take is the next group from the front of the queue: waiting entries in order, at most half
// of them (at least MinBatch), MaxDecisions and MaxBytes (the first always), a solo entry only
// alone. Abandoned entries are dropped on the way. Called with l.mu held.
//
// Half: the rest leaves with the lane's next call to finish, so two calls of the lane overlap
// (the server runs one while the client reads the other's replies) instead of one batch of
// everything alternating with idle time on both sides (it cost both sides more CPU per
// decision when measured with tools/peer-bench.py's Go series).
func (l *lane) take(config Batching) []*entry {
	var group []*entry
	bytes := 0
	most := min(config.MaxDecisions, max(config.MinBatch, (len(l.queue)+1)/2))
	for len(l.queue) > 0 {
		front := l.queue[0]
		full := len(group) >= most || bytes+front.bytes > config.MaxBytes
		if len(group) > 0 && (front.solo || full) {
			break
		}
		l.queue[0] = nil
		l.queue = l.queue[1:]
		if !front.state.CompareAndSwap(waiting, taken) {
			continue // abandoned
		}
		bytes += front.bytes
		group = append(group, front)
		if front.solo {
			break
		}
	}
	if len(l.queue) == 0 {
		l.queue = nil // lets the backing array go
	}
	return group
}

// newEntry is the queued form of one decision.
func newEntry(def *scripts.ScriptDef, keys []string, args []any, config Batching) *entry {
	size := 0
	for _, k := range keys {
		size += len(k)
	}
	for _, a := range args {
		size += argBytes(a)
	}
	solo := size > config.MaxBytes || len(keys)+len(args) > maxDecisionItems
	return &entry{def: def, keys: keys, args: args, bytes: size, solo: solo, reply: make(chan outcome, 1)}
}

// maxDecisionItems is the most keys plus arguments one decision may carry inside a batch (the
// entry point unpacks a variadic decision's lists onto Lua's stack); a larger one goes alone.
const maxDecisionItems = 4096

// argBytes is an argument's size as sent (a number at most 20 digits).
func argBytes(a any) int {
	switch v := a.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	}
	return 20
}

// wait is the decision's outcome; if ctx ends first, a decision still waiting was never sent,
// one taken may have run.
func (e *entry) wait(ctx context.Context) (any, error) {
	select {
	case o := <-e.reply:
		return o.raw, o.err
	case <-ctx.Done():
	}
	err := ctx.Err()
	if e.state.CompareAndSwap(waiting, abandoned) {
		return nil, wrap(ErrNotSent, err, "the context ended while waiting for a call in flight: %v", err)
	}
	return nil, &OutcomeUnknownError{Reason: "the context ended while its batch was in flight: " + err.Error(),
		Attempts: 1, TimedOut: errors.Is(err, context.DeadlineExceeded), cause: err}
}
