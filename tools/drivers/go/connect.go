package main

import (
	"context"
	"strings"
	"time"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
	"github.com/redis/go-redis/v9"
)

// hello is the harness's hello: where the row's server is, its namespace, the fault meanwhile.
type hello struct {
	Row       string   `json:"row"`
	URL       string   `json:"url"`
	URLs      []string `json:"urls"`
	Cluster   bool     `json:"cluster"`
	Namespace string   `json:"namespace"`
	Fault     *string  `json:"fault"`
}

// faultTimeout is the in-process rows' timeout under a fault.
const faultTimeout = 200 * time.Millisecond

// connect is the client a user builds: Connect on one server (go-redis's resends off, the
// context's deadline honoured), New over a ClusterClient on a cluster (the module sends every
// script as a command go-redis never resends once it may have been written).
func connect(h hello) *redisatomic.Client {
	ctx := context.Background()
	if !h.Cluster {
		return connectOne(ctx, withTimeout(h.URL, h.Fault != nil))
	}
	o := &redis.ClusterOptions{ContextTimeoutEnabled: true}
	for _, u := range h.URLs {
		one, err := redis.ParseURL(u)
		if err != nil {
			panic(err)
		}
		o.Addrs = append(o.Addrs, one.Addr)
	}
	if h.Fault != nil {
		o.ReadTimeout, o.WriteTimeout = faultTimeout, faultTimeout
	}
	return redisatomic.New(redis.NewClusterClient(o))
}

// connectTries bounds connectOne: a fault may kill the connection Connect checks (its PING).
const connectTries = 10

// connectOne is Connect, tried again while its error is transient (ErrConnection: nothing ran),
// as its guide tells a user: a kept process says hello while the row's fault is already on.
func connectOne(ctx context.Context, url string) *redisatomic.Client {
	for try := 1; ; try++ {
		c, err := redisatomic.Connect(ctx, url)
		if err == nil {
			return c
		}
		if try == connectTries || !redisatomic.IsTransient(err) {
			panic(err)
		}
		time.Sleep(time.Duration(try) * 20 * time.Millisecond)
	}
}

// withTimeout adds go-redis's URL options for the short timeout under a fault.
func withTimeout(url string, fault bool) string {
	if !fault {
		return url
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "read_timeout=" + faultTimeout.String() + "&write_timeout=" + faultTimeout.String()
}
