// Go peer drivers for `redis-atomic verify --driver` (docs/verify.md, "Drivers"), over go-redis
// v9 with its defaults (it retries a failed command three times on its own):
//
//	driver redsync     redsync's Mutex, row `mutex` (it has no fences). Its README: "Redsync
//	                   provides a Redis-based distributed mutual exclusion lock implementation
//	                   for Go". One attempt per acquisition (`TryLock`: "only attempts to lock m
//	                   once and returns immediately regardless of success or failure without
//	                   retrying"), the lease the harness asks for, the harness's token as value.
//	driver redis_rate  go-redis/redis_rate's Limiter, row `ratelimit-win`: GCRA with the limit
//	                   as both rate and burst (as its `PerSecond` sets them), so at most
//	                   burst + rate admissions in any period: the bound the row judges.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

type message map[string]any

type driver struct {
	peer   string
	client *goredislib.Client
	rs     *redsync.Redsync
	ns     string
	held   map[string]*redsync.Mutex
}

func (d *driver) hello(m message) message {
	if c, _ := m["cluster"].(bool); c {
		return message{"driver": d.peer, "rows": []string{}, "unsupported": "standalone only"}
	}
	if d.client != nil {
		_ = d.client.Close()
	}
	opts, err := goredislib.ParseURL(m["url"].(string))
	if err != nil {
		panic(err)
	}
	d.client = goredislib.NewClient(opts)
	d.rs = redsync.New(goredis.NewPool(d.client))
	d.ns, _ = m["namespace"].(string)
	d.held = map[string]*redsync.Mutex{}
	rows := map[string][]string{"redsync": {"mutex"}, "redis_rate": {"ratelimit-win"}}
	return message{"driver": d.peer, "rows": rows[d.peer]}
}

// taken reports whether err says another holder has the lock (nothing of ours was taken).
func taken(err error) bool {
	var t *redsync.ErrTaken
	return errors.Is(err, redsync.ErrFailed) || errors.As(err, &t)
}

func (d *driver) run(op string, a message) message {
	switch op {
	case "lock.acquire":
		token := a["token"].(string)
		ttl := time.Duration(a["ttl_ms"].(float64)) * time.Millisecond
		m := d.rs.NewMutex(d.ns+":"+a["resource"].(string),
			redsync.WithExpiry(ttl), redsync.WithValue(token), redsync.WithTries(1))
		switch err := m.TryLock(); {
		case err == nil:
			d.held[token] = m
			return message{"outcome": "acquired", "handle": token}
		case taken(err):
			return message{"outcome": "held"}
		default:
			return message{"error": "outcome_unknown"}
		}
	case "lock.release":
		token := a["handle"].(string)
		m := d.held[token]
		delete(d.held, token)
		ok, err := m.Unlock()
		switch {
		case ok:
			return message{"outcome": "released"}
		case err == nil || errors.Is(err, redsync.ErrLockAlreadyExpired) || taken(err):
			return message{"outcome": "lost"}
		default:
			return message{"error": "outcome_unknown"}
		}
	case "ratelimit.consume":
		n := int(a["limit"].(float64))
		period := time.Duration(a["period_ms"].(float64)) * time.Millisecond
		limit := redis_rate.Limit{Rate: n, Burst: n, Period: period}
		res, err := redis_rate.NewLimiter(d.client).Allow(context.Background(), d.ns+":"+a["name"].(string), limit)
		switch {
		case err != nil:
			return message{"error": "outcome_unknown"}
		case res.Allowed > 0:
			return message{"outcome": "allowed"}
		default:
			return message{"outcome": "limited"}
		}
	}
	return message{"error": "bad_argument"}
}

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "redsync" && os.Args[1] != "redis_rate") {
		os.Stderr.WriteString("usage: driver redsync|redis_rate\n")
		os.Exit(2)
	}
	d := &driver{peer: os.Args[1]}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var m message
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			panic(err)
		}
		var answer message
		if m["op"] == "hello" {
			answer = d.hello(m)
		} else {
			args, _ := m["args"].(map[string]any)
			answer = d.run(m["op"].(string), args)
		}
		if err := out.Encode(answer); err != nil {
			panic(err)
		}
	}
}
