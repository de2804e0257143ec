// Command orders is an example service on redis-atomic's Go module: POST /orders is idempotent
// (Idempotency-Key) and rate limited per API key (X-Api-Key, GCRA 10/s with bursts of 5, fail
// closed); POST /reports/{id} runs under a lock, its fence passed to the write it protects.
//
//	go run . -redis redis://127.0.0.1:6379 -listen 127.0.0.1:8080
//	curl -X POST -H 'X-Api-Key: k1' -H 'Idempotency-Key: abc' -d '{"sku":1}' localhost:8080/orders
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"time"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
	"github.com/redis-atomic/redis-atomic/bindings/go/redisatomichttp"
)

func main() {
	url := flag.String("redis", "redis://127.0.0.1:6379", "Redis URL")
	listen := flag.String("listen", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx := context.Background()
	client, err := redisatomic.Connect(ctx, *url)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	mux, err := routes(client)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on http://%s", *listen)
	log.Fatal(http.ListenAndServe(*listen, mux))
}

// routes builds the service's handlers.
func routes(client *redisatomic.Client) (*http.ServeMux, error) {
	store, err := redisatomic.NewIdempotency(client, "orders")
	if err != nil {
		return nil, err
	}
	limit, err := redisatomic.NewLimit(redisatomic.GCRA, 10, time.Second)
	if err == nil {
		limit, err = limit.WithBurst(5)
	}
	if err != nil {
		return nil, err
	}
	policy, err := redisatomic.NewPolicy(limit)
	if err != nil {
		return nil, err
	}
	limiter, err := redisatomic.NewRateLimiter(client, "orders", policy)
	if err != nil {
		return nil, err
	}
	limited, err := redisatomichttp.RateLimit(limiter, redisatomichttp.RateLimitConfig{
		Key: redisatomichttp.ByHeader("X-Api-Key"), Unavailable: redisatomichttp.FailClosed})
	if err != nil {
		return nil, err
	}
	idempotent := redisatomichttp.Idempotency(store, redisatomichttp.IdempotencyConfig{})
	locks, err := redisatomic.NewLocks(client, "orders")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /orders", limited(idempotent(http.HandlerFunc(createOrder))))
	mux.Handle("POST /reports/{id}", report(locks))
	return mux, nil
}

func createOrder(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Location", fmt.Sprintf("/orders/%d", time.Now().UnixNano()))
	w.WriteHeader(http.StatusCreated) // the side effect (charge, insert) runs once per key
}

// report builds one report at a time per id: held elsewhere → 409 with Retry-After.
func report(locks *redisatomic.Locks) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := locks.Acquire(r.Context(), "report-"+r.PathValue("id"), 30*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		lock, ok := res.(*redisatomic.Lock)
		if !ok {
			w.Header().Set("Retry-After", fmt.Sprint(int(res.(redisatomic.Held).RetryAfter.Seconds())+1))
			w.WriteHeader(http.StatusConflict)
			return
		}
		defer func() { _, _ = lock.Release(context.WithoutCancel(r.Context())) }()
		fmt.Fprintf(w, "report built under fence %d\n", lock.Fence()) // pass the fence to the write
	})
}
