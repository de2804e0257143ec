package main

import (
	"context"
	"strconv"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
)

// permit takes a permit of the row's semaphore with the harness's token: retry-safe, so the
// module resends it after an unknown outcome.
func (d *driver) permit(ctx context.Context, a args) (message, error) {
	if d.semaphore == nil {
		sem, err := redisatomic.NewSemaphore(d.client, d.namespace, a.Name, uint32(a.Limit))
		if err != nil {
			panic(err)
		}
		d.semaphore = sem
	}
	got, err := d.semaphore.Acquire(ctx, millis(a.TTLMs), redisatomic.WithToken(a.Token))
	if err != nil {
		return nil, err
	}
	if p, ok := got.(*redisatomic.Permit); ok {
		return message{"outcome": got.Outcome(), "fence": p.Fence(), "handle": p.Fence()}, nil
	}
	return message{"outcome": got.Outcome()}, nil
}

// unpermit gives the permit back by its parts (token and fence).
func (d *driver) unpermit(ctx context.Context, a args) (message, error) {
	fence, err := strconv.ParseUint(a.Handle.String(), 10, 64)
	if err != nil {
		panic(err)
	}
	got, err := d.semaphore.Release(ctx, a.Token, redisatomic.Fence(fence))
	if err != nil {
		return nil, err
	}
	return message{"outcome": got.Outcome()}, nil
}
