package redisatomic

import (
	"context"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// scriptByName is the built-in script of that name.
func scriptByName(name string) *scripts.ScriptDef {
	for _, d := range []*scripts.ScriptDef{scripts.LockAcquireScript, scripts.LockReleaseScript,
		scripts.LockExtendScript, scripts.LockInspectScript, scripts.SemAcquireScript,
		scripts.SemReleaseScript, scripts.SemExtendScript, scripts.SemInspectScript,
		scripts.IdemBeginScript, scripts.IdemCompleteScript, scripts.IdemExtendScript,
		scripts.RlFixedWindowScript, scripts.RlAnchoredWindowScript, scripts.RlSlidingLogScript,
		scripts.RlSlidingWindowScript, scripts.RlTokenBucketScript, scripts.RlGcraScript,
		scripts.RlPolicyScript, scripts.QuotaAddScript, scripts.QuotaAddIdScript, scripts.QuotaMaxScript,
		scripts.QueueEnqueueScript, scripts.QueueClaimScript, scripts.QueueClaimIdScript,
		scripts.QueueAckScript, scripts.QueueNackScript, scripts.QueueExtendScript,
		scripts.FencedWriteScript} {
		if d.Name == name {
			return d
		}
	}
	return nil
}

func outcomeOf(r interface{ Outcome() string }, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return r.Outcome(), nil
}

func idempotencyOperation(ctx context.Context, c *Client, op string, in map[string]any) (string, error) {
	store, _ := NewIdempotency(c, str(in["namespace"]))
	cfg := DefaultIdempotencyConfig()
	if conf, ok := in["config"].(map[string]any); ok {
		cfg.TTL = time.Duration(num(conf["ttl_ms"])) * time.Millisecond
		cfg.ResultTTL = time.Duration(num(conf["result_ttl_ms"])) * time.Millisecond
	}
	store, err := store.WithConfig(cfg)
	if err != nil {
		return "", err
	}
	scope, key, token, fence := str(in["scope"]), []byte(str(in["key"])), str(in["token"]), Fence(num(in["fence"]))
	switch op {
	case "idempotency.begin_with_token":
		var parts [][]byte
		for _, p := range in["fingerprint"].([]any) {
			parts = append(parts, []byte(p.(string)))
		}
		return outcomeOf(store.BeginWithToken(ctx, scope, key, FingerprintOf(parts...), token))
	case "idempotency.extend":
		return outcomeOf(store.Extend(ctx, scope, key, token, fence, time.Duration(num(in["ttl_ms"]))*time.Millisecond))
	case "idempotency.fail":
		if in["failure"] == "final" {
			resp := vectorResponse(in["response"].(map[string]any))
			return outcomeOf(store.Fail(ctx, scope, key, token, fence, &resp))
		}
		return outcomeOf(store.Fail(ctx, scope, key, token, fence, nil))
	}
	return outcomeOf(store.Complete(ctx, scope, key, token, fence, vectorResponse(in["response"].(map[string]any))))
}

func vectorResponse(r map[string]any) Response {
	resp := Response{Status: uint16(num(r["status"])), Body: []byte(str(r["body"])), Reference: str(r["body_reference"])}
	for _, h := range r["headers"].([]any) {
		pair := h.([]any)
		resp.Headers = append(resp.Headers, Header{pair[0].(string), []byte(pair[1].(string))})
	}
	return resp
}

func rateLimitOperation(ctx context.Context, c *Client, in map[string]any) (string, error) {
	var limits []Limit
	for _, raw := range in["limits"].([]any) {
		l, err := vectorLimit(raw.(map[string]any))
		if err != nil {
			return "", err
		}
		limits = append(limits, l)
	}
	p, err := NewPolicy(limits...)
	if err != nil {
		return "", err
	}
	rl, _ := NewRateLimiter(c, str(in["namespace"]), p)
	v, err := rl.ConsumeDetailed(ctx, str(in["identity"]), uint64(num(in["cost"])), str(in["request_id"]))
	if err != nil {
		return "", err
	}
	return v.Decision.Outcome(), nil
}

func queueOperation(ctx context.Context, c *Client, op string, in map[string]any) (string, error) {
	cfg := DefaultQueueConfig()
	if conf, ok := in["config"].(map[string]any); ok {
		cfg.MaxDeliveries = uint32(num(conf["max_deliveries"]))
		cfg.MaxDeadLetters = uint32(num(conf["max_dead_letters"]))
		cfg.DeadLetterRetention = time.Duration(num(conf["dead_letter_retention_ms"])) * time.Millisecond
	}
	q, err := NewQueue(c, str(in["namespace"]), str(in["name"]), cfg)
	if err != nil {
		return "", err
	}
	ms := func(k string) time.Duration { return time.Duration(num(in[k])) * time.Millisecond }
	id, worker, fence := str(in["job_id"]), str(in["token"]), Fence(num(in["fence"]))
	switch op {
	case "queue.enqueue":
		payload := bytesOf(in["payload"])
		if at, ok := in["at_ms"]; ok {
			return outcomeOf(q.EnqueueAt(ctx, id, payload, time.UnixMilli(int64(num(at)))))
		}
		return outcomeOf(q.Enqueue(ctx, id, payload, ms("delay_ms")))
	case "queue.claim":
		return outcomeOf(q.Claim(ctx, str(in["worker"]), ms("ttl_ms"), int(num(in["max_jobs"]))))
	case "queue.claim_with_id":
		return outcomeOf(q.ClaimWithID(ctx, str(in["worker"]), ms("ttl_ms"), int(num(in["max_jobs"])), str(in["claim_id"])))
	case "queue.ack":
		return outcomeOf(q.Ack(ctx, id, worker, fence))
	case "queue.nack":
		return outcomeOf(q.Nack(ctx, id, worker, fence, ms("retry_after_ms"), str(in["error"])))
	}
	return outcomeOf(q.Extend(ctx, id, worker, fence, ms("ttl_ms")))
}

func fencedOperation(ctx context.Context, c *Client, in map[string]any) (string, error) {
	fw, _ := NewFencedWrites(c, str(in["namespace"]))
	resource := str(in["resource"])
	var writes []Write
	for _, raw := range in["writes"].([]any) {
		w := raw.(map[string]any)
		k, err := fw.Key(resource, str(w["part"]))
		if err != nil {
			return "", err
		}
		switch w["op"] {
		case "set":
			if ttl, ok := w["ttl_ms"]; ok {
				writes = append(writes, WriteSetPX(k, []byte(str(w["value"])), time.Duration(num(ttl))*time.Millisecond))
			} else {
				writes = append(writes, WriteSet(k, []byte(str(w["value"]))))
			}
		case "hset":
			fields := map[string][]byte{}
			for _, f := range w["fields"].([]any) {
				pair := f.([]any)
				fields[pair[0].(string)] = []byte(pair[1].(string))
			}
			writes = append(writes, WriteHSet(k, fields))
		case "del":
			writes = append(writes, WriteDel(k))
		case "hdel":
			writes = append(writes, WriteHDel(k, stringList(w["fields"])...))
		case "sadd", "srem":
			var members [][]byte
			for _, m := range stringList(w["members"]) {
				members = append(members, []byte(m))
			}
			if w["op"] == "sadd" {
				writes = append(writes, WriteSAdd(k, members...))
			} else {
				writes = append(writes, WriteSRem(k, members...))
			}
		case "pexpire":
			writes = append(writes, WriteExpire(k, time.Duration(num(w["ttl_ms"]))*time.Millisecond))
		}
	}
	return outcomeOf(fw.Write(ctx, resource, Fence(num(in["fence"])), writes...))
}

func stringList(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
