package redisatomic_test

import (
	"context"
	"log"
	"time"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
)

// The README's example (compiled, not run: it needs a server at 127.0.0.1:6379).
func ExampleLocks_Acquire() {
	ctx := context.Background()
	client, err := redisatomic.Connect(ctx, "redis://127.0.0.1:6379")
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	locks, err := redisatomic.NewLocks(client, "app")
	if err != nil {
		log.Fatal(err)
	}
	res, err := locks.Acquire(ctx, "order-42", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	switch r := res.(type) {
	case *redisatomic.Lock:
		defer r.Release(ctx)
		log.Printf("holding order-42 with fence %d", r.Fence())
	case redisatomic.Held:
		log.Printf("busy, retry in %v", r.RetryAfter)
	}
}

// docs/go.md's five lines (compiled, not run: it needs a server at 127.0.0.1:6379).
func ExampleRateLimiter_Consume() {
	ctx := context.Background()
	client, _ := redisatomic.Connect(ctx, "redis://127.0.0.1:6379")
	limit, _ := redisatomic.NewLimit(redisatomic.GCRA, 10, time.Second) // 10 per second
	policy, _ := redisatomic.NewPolicy(limit)
	limiter, _ := redisatomic.NewRateLimiter(client, "api", policy)
	decision, _ := limiter.Consume(ctx, "user-42", 1) // Allowed{Remaining, ResetAfter} | Limited{RetryAfter, ResetAfter}
	log.Println(decision)
}
