package redisatomic

import (
	"context"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Claim is a live idempotency claim (the outcome "claimed"): Fence, Token, TTL, ExpiresBy,
// Extend, Watch, and Complete or Fail, which end the handle. A watched claim is not given back
// after an unconfirmed loss: its record must stay until it is completed or taken over.
type Claim struct {
	lease
	store    *Idempotency
	keys     IdempotencyKeys
	takeover bool
}

// Outcome is "claimed".
func (*Claim) Outcome() string { return "claimed" }
func (*Claim) isBegin()        {}

// IsTakeover reports whether this claim took over one whose lease ran out.
func (c *Claim) IsTakeover() bool { return c.takeover }

// Complete stores response as the request's result and ends the handle.
func (c *Claim) Complete(ctx context.Context, response Response) (EndResult, error) {
	if err := c.end("complete"); err != nil {
		return nil, err
	}
	return c.store.finish(ctx, c.keys, c.token, c.fence, "completed", &response)
}

// Fail ends the claim and the handle: final nil frees the key for a retry; a final response is
// stored and replayed as failed.
func (c *Claim) Fail(ctx context.Context, final *Response) (EndResult, error) {
	if err := c.end("fail"); err != nil {
		return nil, err
	}
	return c.store.finish(ctx, c.keys, c.token, c.fence, failWord(final), final)
}

func (i *Idempotency) claim(keys IdempotencyKeys, token string, fence Fence, sent time.Time, takeover bool) *Claim {
	c := &Claim{lease: newLease(token, fence, sent, i.config.TTL), store: i, keys: keys, takeover: takeover}
	c.renew = func(ctx context.Context, ttl time.Duration) (ExtendResult, error) {
		return i.extendRecord(ctx, keys, token, fence, ttl)
	}
	return c
}

// EndResult is what Complete and Fail answer: Stored or Lost.
type EndResult interface {
	Outcome() string
	isEnd()
}

// Stored: the result was stored (a repeat with the same token and fence answers it again).
type Stored struct{}

// Outcome is "stored".
func (Stored) Outcome() string { return "stored" }
func (Stored) isEnd()          {}
func (Lost) isEnd()            {}

func (i *Idempotency) extendRecord(ctx context.Context, keys IdempotencyKeys, token string, fence Fence, ttl time.Duration) (ExtendResult, error) {
	ttlMs, err := millis("ttl", ttl, maxIdemTTL)
	if err == nil {
		err = checkToken(token)
	}
	if err != nil {
		return nil, err
	}
	reply, err := scripts.CallIdemExtend(ctx, i.client, scripts.IdemExtendKeys{Record: keys.Record},
		scripts.IdemExtendArgs{Token: token, Fence: fenceArg(fence), TtlMs: ttlMs})
	if err != nil {
		return nil, replyError(err)
	}
	if r, ok := reply.(scripts.IdemExtendExtended); ok {
		return Extended{Fence: Fence(r.Fence), TTL: ms(r.TtlMs)}, nil
	}
	return Lost{}, nil
}

func (i *Idempotency) finish(ctx context.Context, keys IdempotencyKeys, token string, fence Fence, word string, r *Response) (EndResult, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	var payload []byte
	if r != nil {
		p, err := r.encode()
		if err != nil {
			return nil, err
		}
		payload = p
	}
	if len(payload) > i.config.MaxResponseBytes {
		return nil, wrap(ErrBadArgument, nil, "response is %d bytes encoded, over the %d-byte limit: store a Reference",
			len(payload), i.config.MaxResponseBytes)
	}
	resultTTL, _ := millis("result_ttl", i.config.ResultTTL, maxResultTTL)
	reply, err := scripts.CallIdemComplete(ctx, i.client, scripts.IdemCompleteKeys{Record: keys.Record},
		scripts.IdemCompleteArgs{Token: token, Fence: fenceArg(fence), Outcome: word, Payload: payload, ResultTtlMs: resultTTL})
	if err != nil {
		return nil, replyError(err)
	}
	if _, ok := reply.(scripts.IdemCompleteStored); ok {
		return Stored{}, nil
	}
	return Lost{}, nil
}
