package redisatomic

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// recorder is a go-redis hook keeping the last command sent whose name is one of names.
type recorder struct {
	mu    sync.Mutex
	names map[string]bool
	last  []any
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if r.names[cmd.Name()] {
			r.mu.Lock()
			r.last = append([]any(nil), cmd.Args()...)
			r.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

// The arguments section: every operation (after its setup) run on a real server through a
// client whose commands are recorded as go-redis writes them (a hook: the arguments as they go
// on the wire, go-redis formatting integers in decimal); the script, keys and arguments sent
// are the vector's, byte for byte, and so is the outcome.
func TestConformanceArguments(t *testing.T) {
	c, _ := connect(t)
	rec := &recorder{names: map[string]bool{"evalsha": true, "evalsha_ro": true, "set": true}}
	c.Redis().AddHook(rec)
	ran := 0
	for _, v := range vectors(t, "arguments") {
		check(t, c.Redis().FlushAll(testCtx(t)).Err())
		in, sent := v["input"].(map[string]any), v["sent"].(map[string]any)
		setup, _ := v["setup"].([]any)
		for _, raw := range setup {
			s := raw.(map[string]any)
			if _, err := runOperation(testCtx(t), c, s["operation"].(string), s["input"].(map[string]any)); err != nil {
				t.Errorf("%s: setup: %v", v["id"], err)
			}
		}
		outcome, err := runOperation(testCtx(t), c, v["operation"].(string), in)
		if err != nil {
			t.Errorf("%s: %v", v["id"], err)
			continue
		}
		if want, ok := v["outcome"]; ok && outcome != want {
			t.Errorf("%s: outcome %q, want %q", v["id"], outcome, want)
		}
		rec.mu.Lock()
		got := rec.last
		rec.mu.Unlock()
		checkSent(t, v["id"].(string), sent, got)
		ran++
	}
	if ran < 40 {
		t.Fatalf("only %d cases ran", ran)
	}
}

// checkSent compares a recorded command with a vector's "sent" ({script, keys, args} or
// {command, args}).
func checkSent(t *testing.T, id string, sent map[string]any, got []any) {
	t.Helper()
	var want []string
	if script, ok := sent["script"].(string); ok {
		def := scriptByName(script)
		if def == nil || len(got) < 3 || fmt.Sprint(got[1]) != def.SHA1 {
			t.Errorf("%s: sent %v, want script %s", id, got, script)
			return
		}
		keys := sent["keys"].([]any)
		want = append(want, fmt.Sprint(len(keys)))
		for _, k := range keys {
			want = append(want, k.(string))
		}
		got = got[2:]
	} else {
		got = got[1:]
	}
	for _, a := range sent["args"].([]any) {
		if m, ok := a.(map[string]any); ok {
			b, _ := hex.DecodeString(m["hex"].(string))
			a = string(b)
		}
		want = append(want, a.(string))
	}
	if len(got) != len(want) {
		t.Errorf("%s: sent %d values %v, want %d %v", id, len(got), got, len(want), want)
		return
	}
	for i := range want {
		if g := stringOf(got[i]); g != want[i] {
			t.Errorf("%s: value %d is %q, want %q", id, i, g, want[i])
		}
	}
}

func stringOf(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// runOperation runs one vector's operation; its outcome word.
func runOperation(ctx context.Context, c *Client, op string, in map[string]any) (string, error) {
	ns, ms := str(in["namespace"]), func(k string) time.Duration { return time.Duration(num(in[k])) * time.Millisecond }
	fence := Fence(num(in["fence"]))
	type result interface{ Outcome() string }
	out := func(r result, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return r.Outcome(), nil
	}
	switch op {
	case "lock.acquire_with_token", "lock.release", "lock.extend", "lock.inspect":
		l, _ := NewLocks(c, ns)
		switch op {
		case "lock.acquire_with_token":
			return out(l.Acquire(ctx, str(in["resource"]), ms("ttl_ms"), WithToken(str(in["token"]))))
		case "lock.release":
			return out(l.Release(ctx, str(in["resource"]), str(in["token"]), fence))
		case "lock.extend":
			return out(l.Extend(ctx, str(in["resource"]), str(in["token"]), fence, ms("ttl_ms")))
		}
		return out(l.Inspect(ctx, str(in["resource"])))
	case "semaphore.acquire_with_token", "semaphore.release", "semaphore.extend", "semaphore.inspect":
		s, _ := NewSemaphore(c, ns, str(in["name"]), uint32(num(in["capacity"])))
		switch op {
		case "semaphore.acquire_with_token":
			return out(s.Acquire(ctx, ms("ttl_ms"), WithToken(str(in["token"]))))
		case "semaphore.release":
			return out(s.Release(ctx, str(in["token"]), fence))
		case "semaphore.extend":
			return out(s.Extend(ctx, str(in["token"]), fence, ms("ttl_ms")))
		}
		_, err := s.Inspect(ctx)
		return "", err
	case "idempotency.begin_with_token", "idempotency.complete", "idempotency.fail", "idempotency.extend":
		return idempotencyOperation(ctx, c, op, in)
	case "ratelimit.consume", "ratelimit.consume_with_id":
		return rateLimitOperation(ctx, c, in)
	case "quota.add", "quota.add_clamped", "quota.add_with_id", "quota.raise":
		q, _ := NewQuotas(c, ns)
		b := Bounds{int64(num(in["min"])), int64(num(in["max"]))}
		name, delta, ttl := str(in["name"]), int64(num(in["delta"])), ms("ttl_ms")
		switch op {
		case "quota.add":
			return out(q.Add(ctx, name, delta, b, ttl))
		case "quota.add_clamped":
			return out(q.AddClamped(ctx, name, delta, b, ttl))
		case "quota.add_with_id":
			return out(q.AddWithID(ctx, name, delta, b, ttl, str(in["request_id"])))
		}
		return out(q.Raise(ctx, name, int64(num(in["candidate"]))))
	case "queue.enqueue", "queue.claim", "queue.claim_with_id", "queue.ack", "queue.nack", "queue.extend":
		return queueOperation(ctx, c, op, in)
	case "fenced.fenced_write":
		return fencedOperation(ctx, c, in)
	case "dedup.first_seen_as":
		d, _ := NewDedup(c, ns)
		first, err := d.FirstSeenAs(ctx, str(in["event_id"]), ms("ttl_ms"), str(in["token"]))
		return map[bool]string{true: "first", false: "duplicate"}[first], err
	}
	return "", fmt.Errorf("no Go call for %s", op)
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// The spellings section's algorithm cases, through ParseAlgorithm (the delivery cases belong to
// FCALL delivery, which this module does not have: counted, and the count checked).
func TestConformanceSpellings(t *testing.T) {
	ran, delivery := 0, 0
	for _, v := range vectors(t, "spellings") {
		if v["kind"] != "algorithm" {
			delivery++
			continue
		}
		a, err := ParseAlgorithm(v["input"].(string))
		if want, ok := v["error"]; ok {
			if Code(err) != want {
				t.Errorf("%s: %v, want %v", v["id"], err, want)
			}
		} else if err != nil || string(a) != v["canonical"] || algorithmCodes[a] != v["code"] {
			t.Errorf("%s: %q %v", v["id"], a, err)
		}
		ran++
	}
	if ran < 16 || delivery > 7 {
		t.Fatalf("%d algorithm cases, %d others", ran, delivery)
	}
}
