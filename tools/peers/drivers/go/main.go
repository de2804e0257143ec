// A peer driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"): redsync's Mutex
// over go-redis v9 with its defaults (it retries a failed command three times on its own), row
// `mutex` (redsync has no fences). Its README: "Redsync provides a Redis-based distributed
// mutual exclusion lock implementation for Go". One attempt per acquisition (`TryLock`: "only
// attempts to lock m once and returns immediately regardless of success or failure without
// retrying"), the lease the harness asks for (`WithExpiry`), the harness's token as the value.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

type message map[string]any

type driver struct {
	client *goredislib.Client
	rs     *redsync.Redsync
	ns     string
	held   map[string]*redsync.Mutex
}

func (d *driver) hello(m message) message {
	if c, _ := m["cluster"].(bool); c {
		return message{"driver": "redsync", "rows": []string{}, "unsupported": "standalone only"}
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
	return message{"driver": "redsync", "rows": []string{"mutex"}}
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
	}
	return message{"error": "bad_argument"}
}

func main() {
	d := &driver{}
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
