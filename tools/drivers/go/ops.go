package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
)

// args are every request's arguments (each op reads its own).
type args struct {
	Resource  string      `json:"resource"`
	Token     string      `json:"token"`
	Handle    json.Number `json:"handle"`
	TTLMs     int64       `json:"ttl_ms"`
	Name      string      `json:"name"`
	Delta     int64       `json:"delta"`
	Min       int64       `json:"min"`
	Max       int64       `json:"max"`
	RequestID string      `json:"request_id"`
	Limit     uint64      `json:"limit"`
	PeriodMs  int64       `json:"period_ms"`
}

// call makes one request's call through the module, once: the module resends what it may.
func (d *driver) call(ctx context.Context, op string, a args) (message, error) {
	switch op {
	case "lock.acquire":
		return d.acquire(ctx, a)
	case "lock.release":
		return d.release(ctx, a)
	case "quota.add":
		got, err := d.quotas.AddWithID(ctx, a.Name, a.Delta, redisatomic.Bounds{Min: a.Min, Max: a.Max},
			millis(a.TTLMs), a.RequestID)
		if err != nil {
			return nil, err
		}
		return message{"outcome": got.Outcome(), "value": value(got)}, nil
	case "quota.get":
		v, err := d.quotas.Get(ctx, a.Name)
		return message{"outcome": "value", "value": v}, err
	case "ratelimit.consume":
		return d.consume(ctx, a)
	case "semaphore.acquire":
		return d.permit(ctx, a)
	case "semaphore.release":
		return d.unpermit(ctx, a)
	}
	panic(fmt.Sprintf("unknown op %q", op))
}

// acquire takes the lock with the harness's token: retry-safe, so the module resends it after
// an unknown outcome.
func (d *driver) acquire(ctx context.Context, a args) (message, error) {
	got, err := d.locks.Acquire(ctx, a.Resource, millis(a.TTLMs), redisatomic.WithToken(a.Token))
	if err != nil {
		return nil, err
	}
	if lock, ok := got.(*redisatomic.Lock); ok {
		return message{"outcome": got.Outcome(), "fence": lock.Fence(), "handle": lock.Fence()}, nil
	}
	return message{"outcome": got.Outcome()}, nil
}

// release frees the lock by its parts (token and fence), as a process that kept them would.
func (d *driver) release(ctx context.Context, a args) (message, error) {
	fence, err := strconv.ParseUint(a.Handle.String(), 10, 64)
	if err != nil {
		panic(err)
	}
	got, err := d.locks.Release(ctx, a.Resource, a.Token, redisatomic.Fence(fence))
	if err != nil {
		return nil, err
	}
	return message{"outcome": got.Outcome()}, nil
}

func value(got redisatomic.AddResult) int64 {
	switch r := got.(type) {
	case redisatomic.Applied:
		return r.Value
	case redisatomic.Refused:
		return r.Value
	}
	panic(fmt.Sprintf("unknown add result %T", got))
}

// consume charges one unit, without a request id (the row's calls have none): not retry-safe,
// so the module never resends it after an unknown outcome.
func (d *driver) consume(ctx context.Context, a args) (message, error) {
	if d.limiter == nil {
		algorithm := redisatomic.FixedWindow
		if d.row == "ratelimit-sl" {
			algorithm = redisatomic.SlidingLog
		}
		d.limiter = newLimiter(d.client, d.namespace, algorithm, a.Limit, millis(a.PeriodMs))
	}
	got, err := d.limiter.Consume(ctx, a.Name, 1)
	if err != nil {
		return nil, err
	}
	return message{"outcome": got.Outcome()}, nil
}
