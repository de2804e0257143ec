// Command peer-go is the Go client of tools/peer-bench.py: one client's run, printed as the one
// JSON line the harness parses (decisions or lock cycles per second as "rate", the share of one
// core the server used meanwhile, this process's CPU per operation, versions).
//
// Clients (--client): redis_rate (go-redis/redis_rate's GCRA), ra-gcra and ra-aw (this
// repository's Go module: GCRA and the anchored window), redsync (go-redsync's Mutex: lock and
// unlock) and ra-lock (the module's Locks: acquire and release); the module's clients with
// the suffix -unbatched run with its batching off (WithBatching(NoBatching())). Every decision is an admission
// (10^9 per minute) for an identity drawn at random from --identities; every lock cycle takes a
// resource of its worker's own, so none is refused. A refusal or an error fails the run (exit 1).
// Every client gets the same go-redis client: one connection per operation in flight (go-redis
// does not multiplex), --concurrency goroutines.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
	"github.com/redis/go-redis/v9"
)

type options struct {
	host, client                  string
	port, concurrency, identities int
	seconds, warmup               float64
}

// op is one decision or lock cycle of worker w, its i-th.
type op func(ctx context.Context, w, i int) error

func main() {
	var o options
	flag.StringVar(&o.host, "host", "127.0.0.1", "server host")
	flag.IntVar(&o.port, "port", 0, "server port")
	flag.StringVar(&o.client, "client", "", "redis_rate, ra-gcra, ra-aw, redsync or ra-lock")
	flag.Float64Var(&o.seconds, "seconds", 5, "measured seconds")
	flag.Float64Var(&o.warmup, "warmup", 0.25, "warm-up seconds")
	flag.IntVar(&o.concurrency, "concurrency", 16, "operations in flight")
	flag.IntVar(&o.identities, "identities", 100000, "identities (or resources per worker)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "peer-go %s: %v\n", o.client, err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("%s:%d", o.host, o.port),
		PoolSize: o.concurrency, MinIdleConns: o.concurrency})
	defer rdb.Close()
	client, unbatched := strings.CutSuffix(o.client, "-unbatched")
	batching := redisatomic.DefaultBatching()
	if unbatched {
		batching = redisatomic.NoBatching()
	}
	o.client = client
	ra := redisatomic.New(rdb, redisatomic.WithBatching(batching))
	do, err := operation(ctx, o, ra)
	if err != nil {
		return err
	}
	if _, err := drive(ctx, do, o.concurrency, time.Duration(o.warmup*float64(time.Second))); err != nil {
		return err
	}
	cpu0, err := serverCPU(ctx, rdb)
	if err != nil {
		return err
	}
	own0, start := processCPU(), time.Now()
	calls, err := drive(ctx, do, o.concurrency, time.Duration(o.seconds*float64(time.Second)))
	if err != nil {
		return err
	}
	secs, own := time.Since(start).Seconds(), processCPU()-own0
	cpu1, err := serverCPU(ctx, rdb)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"decisions": calls, "secs": secs, "rate": float64(calls) / secs,
		"server_cpu": (cpu1 - cpu0) / secs, "client_cpu_us": own / float64(max(calls, 1)) * 1e6,
		"runtime":  fmt.Sprintf("%s (%d goroutines, GOMAXPROCS %d)", runtime.Version(), o.concurrency, runtime.GOMAXPROCS(0)),
		"packages": versions(), "batching": ra.BatchStats(),
	})
}

// operation builds the chosen client's op.
func operation(ctx context.Context, o options, ra *redisatomic.Client) (op, error) {
	rdb := ra.Redis()
	identity := func() string { return "user-" + strconv.Itoa(rand.IntN(o.identities)) }
	resource := func(w, i int) string { return fmt.Sprintf("res-%d-%d", w, i%o.identities) }
	switch o.client {
	case "redis_rate":
		limiter := redis_rate.NewLimiter(rdb)
		limit := redis_rate.Limit{Rate: 1_000_000_000, Burst: 1_000_000_000, Period: time.Minute}
		return func(ctx context.Context, _, _ int) error {
			res, err := limiter.Allow(ctx, identity(), limit)
			if err == nil && res.Allowed != 1 {
				err = fmt.Errorf("refused: %+v", res)
			}
			return err
		}, nil
	case "ra-gcra", "ra-aw":
		alg := map[string]redisatomic.Algorithm{"ra-gcra": redisatomic.GCRA, "ra-aw": redisatomic.AnchoredWindow}[o.client]
		limiter, err := rateLimiter(ra, alg)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, _, _ int) error {
			d, err := limiter.Consume(ctx, identity(), 1)
			if err == nil && !d.IsAllowed() {
				err = fmt.Errorf("refused: %#v", d)
			}
			return err
		}, nil
	case "redsync":
		rs := redsync.New(goredis.NewPool(rdb))
		return func(ctx context.Context, w, i int) error {
			m := rs.NewMutex(resource(w, i), redsync.WithExpiry(10*time.Second), redsync.WithTries(1))
			if err := m.LockContext(ctx); err != nil {
				return err
			}
			if ok, err := m.UnlockContext(ctx); !ok || err != nil {
				return fmt.Errorf("unlock: %v %v", ok, err)
			}
			return nil
		}, nil
	case "ra-lock":
		locks, err := redisatomic.NewLocks(ra, "bench-lock")
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, w, i int) error {
			res, err := locks.Acquire(ctx, resource(w, i), 10*time.Second)
			if err != nil {
				return err
			}
			lock, ok := res.(*redisatomic.Lock)
			if !ok {
				return fmt.Errorf("refused: %#v", res)
			}
			if rel, err := lock.Release(ctx); err != nil || rel.Outcome() != "released" {
				return fmt.Errorf("release: %v %v", rel, err)
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("unknown --client %q", o.client)
}

func rateLimiter(ra *redisatomic.Client, alg redisatomic.Algorithm) (*redisatomic.RateLimiter, error) {
	limit, err := redisatomic.NewLimit(alg, 1_000_000_000, time.Minute)
	if err != nil {
		return nil, err
	}
	policy, err := redisatomic.NewPolicy(limit)
	if err != nil {
		return nil, err
	}
	return redisatomic.NewRateLimiter(ra, "bench", policy)
}

// drive runs op on n goroutines for d; the number of operations made, or the first error.
func drive(ctx context.Context, do op, n int, d time.Duration) (int64, error) {
	until := time.Now().Add(d)
	var calls atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(until) && first.Load() == nil; i++ {
				if err := do(ctx, w, i); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				calls.Add(1)
			}
		}()
	}
	wg.Wait()
	if e := first.Load(); e != nil {
		return 0, *e
	}
	return calls.Load(), nil
}

// serverCPU is the CPU seconds the server has used (INFO cpu, user + system).
func serverCPU(ctx context.Context, rdb *redis.Client) (float64, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_user" || k == "used_cpu_sys" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total, nil
}

// processCPU is this process's CPU seconds (user + system).
func processCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// versions are the modules this binary was built with.
func versions() map[string]string {
	out := map[string]string{}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			switch m.Path {
			case "github.com/redis/go-redis/v9", "github.com/go-redis/redis_rate/v10", "github.com/go-redsync/redsync/v4":
				out[m.Path] = m.Version
			}
		}
	}
	return out
}
