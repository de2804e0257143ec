package main

import (
	"time"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
)

// newLimiter is the row's limiter: one limit of algorithm, limit units per period.
func newLimiter(c *redisatomic.Client, namespace string, algorithm redisatomic.Algorithm, limit uint64, period time.Duration) *redisatomic.RateLimiter {
	l, err := redisatomic.NewLimit(algorithm, limit, period)
	if err != nil {
		panic(err)
	}
	p, err := redisatomic.NewPolicy(l)
	if err != nil {
		panic(err)
	}
	r, err := redisatomic.NewRateLimiter(c, namespace, p)
	if err != nil {
		panic(err)
	}
	return r
}
