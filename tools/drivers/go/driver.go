package main

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
)

// rows are the protocol's rows this driver implements.
var rows = []string{"lock", "quota", "ratelimit-sl", "ratelimit-win", "semaphore"}

// driver holds one process's client and the row's primitives (remade at every hello).
type driver struct {
	row       string
	namespace string
	client    *redisatomic.Client
	locks     *redisatomic.Locks
	quotas    *redisatomic.Quotas
	limiter   *redisatomic.RateLimiter
	semaphore *redisatomic.Semaphore
}

func (d *driver) hello(h hello) message {
	d.close()
	d.row, d.client, d.limiter, d.semaphore = h.Row, connect(h), nil, nil
	var err error
	if d.locks, err = redisatomic.NewLocks(d.client, h.Namespace); err != nil {
		panic(err)
	}
	if d.quotas, err = redisatomic.NewQuotas(d.client, h.Namespace); err != nil {
		panic(err)
	}
	d.namespace = h.Namespace
	return message{"driver": "redisatomic (Go, go-redis)", "rows": rows}
}

func (d *driver) close() {
	if d.client != nil {
		_ = d.client.Redis().Close() // New leaves a caller's client open: close it here
	}
}

// run answers one request: the outcome's word and fields, or the module's error code.
func (d *driver) run(op string, raw json.RawMessage) message {
	var a args
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		panic(err)
	}
	answer, err := d.call(context.Background(), op, a)
	if err != nil {
		code := redisatomic.Code(err)
		if code == "" {
			panic(err) // not the module's error: a bug of this driver or of the module
		}
		return message{"error": code}
	}
	return answer
}

func millis(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
