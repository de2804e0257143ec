package redisatomic

// Sending a group of waiting decisions: one call of the batch entry point, or, below
// Batching.MinBatch (or for a decision too large to batch), each decision's own call, all at
// once on the pool's connections.
//
// The batch call is encoded as the entry point expects (the generator's batch format): every
// decision's keys in order, then runs of `<script> <count>` and the decisions' arguments, with
// `<keys> <args>` counts before each decision of a variadic script. Its delivery is any call's
// (FCALL of the library's entry point or EVALSHA of its own script, reloaded once after
// NOSCRIPT). The reply must be an array of one element per decision; each element is that
// decision's reply, or its error reply, classified by code exactly as a call of its own would
// be. Anything that fails the call as a whole (a refusal, a lost reply, a reply of the wrong
// shape) is every decision's outcome, and each decision's own retry class (Client.Run) decides
// whether it is resent.

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// batched is one attempt of a batchable decision: at once and alone when its lane has a call
// slot free, else in the next call of its lane.
func (c *Client) batched(ctx context.Context, batch, def *scripts.ScriptDef, keys []string, args []any) (any, error) {
	b := c.batcher
	b.decisions.Add(1)
	l := b.lane(batch, c.laneSlot(keys))
	limit := b.config.InFlight
	if !l.tryEnter(limit) {
		e := newEntry(def, keys, args, b.config)
		if l.enqueue(e, limit) {
			return e.wait(ctx)
		}
	}
	b.alone.Add(1)
	defer l.release(c) // hands the slot to what waited meanwhile
	return c.alone(ctx, def, keys, args)
}

// sendGroup sends group, delivering each decision's outcome.
func (c *Client) sendGroup(batch *scripts.ScriptDef, group []*entry) {
	ctx := context.Background()
	if len(group) < c.batcher.config.MinBatch || group[0].solo {
		c.batcher.separate.Add(uint64(len(group)))
		var wg sync.WaitGroup
		send := func(e *entry) {
			raw, err := c.alone(ctx, e.def, e.keys, e.args)
			e.reply <- outcome{raw, err}
		}
		last := len(group) - 1
		for _, e := range group[:last] {
			wg.Add(1)
			c.batcher.workers.run(func() { defer wg.Done(); send(e) })
		}
		send(group[last])
		wg.Wait()
		return
	}
	c.batcher.batches.Add(1)
	c.batcher.batched.Add(uint64(len(group)))
	outcomes, err := c.runBatch(ctx, batch, group)
	for i, e := range group {
		if err != nil {
			e.reply <- outcome{nil, err}
		} else {
			e.reply <- outcomes[i]
		}
	}
}

// runBatch is one call of batch carrying group: each decision's outcome, or the call's error.
func (c *Client) runBatch(ctx context.Context, batch *scripts.ScriptDef, group []*entry) ([]outcome, error) {
	raw, err := c.invoke(ctx, batch, encodeBatch(group))
	if err != nil {
		return nil, err
	}
	replies, ok := raw.([]any)
	if !ok || len(replies) != len(group) {
		return nil, &OutcomeUnknownError{Reason: fmt.Sprintf("a batch of %d decisions answered %s", len(group), shape(raw)), Attempts: 1}
	}
	out := make([]outcome, len(replies))
	for i, r := range replies {
		switch v := r.(type) {
		case redis.Error:
			out[i] = outcome{nil, classifyServerError(v.Error())}
		case bool:
			if !v { // a decision's nil, as RESP3 carries Lua's false
				out[i] = outcome{nil, nil}
			} else {
				out[i] = outcome{int64(1), nil}
			}
		default:
			out[i] = outcome{v, nil}
		}
	}
	return out, nil
}

// shape is what a reply of the wrong shape was, for the error (never its content).
func shape(raw any) string {
	if items, ok := raw.([]any); ok {
		return fmt.Sprintf("%d replies", len(items))
	}
	return fmt.Sprintf("a non-array (%T)", raw)
}

// encodeBatch is the batch call's tail: the key count, every key, then runs of one script's
// decisions.
func encodeBatch(group []*entry) []any {
	n, items := 0, 1
	for _, e := range group {
		n += len(e.keys)
		items += len(e.keys) + len(e.args) + 4
	}
	tail := make([]any, 0, items)
	tail = append(tail, n)
	for _, e := range group {
		for _, k := range e.keys {
			tail = append(tail, k)
		}
	}
	for rest := group; len(rest) > 0; {
		first := rest[0].def
		run := 1
		for run < len(rest) && rest[run].def.Name == first.Name {
			run++
		}
		tail = append(tail, first.Name, run)
		variadic := isVariadic(first)
		for _, e := range rest[:run] {
			if variadic {
				tail = append(tail, len(e.keys), len(e.args))
			}
			tail = append(tail, e.args...)
		}
		rest = rest[run:]
	}
	return tail
}

// isVariadic: the header's keys or arguments end in `name...` (any number).
func isVariadic(def *scripts.ScriptDef) bool {
	last := func(list []string) bool { return len(list) > 0 && strings.HasSuffix(list[len(list)-1], "...") }
	return last(def.Keys) || last(def.Args)
}
