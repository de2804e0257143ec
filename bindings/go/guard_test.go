package redisatomic

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/redis-atomic/redis-atomic/bindings/go/redisatomictest"
	"github.com/redis/go-redis/v9"
)

// A damaged reply (the proxy puts bytes before the real reply) fails its call with an unknown
// outcome caused by ErrBadReply, RetrySafe as the call's, and never panics: a bulk length too
// large to allocate makes go-redis's reader panic, a wrong type byte makes it fail. The script
// ran once, and the next calls on the same client (one connection: the damaged one would be
// reused if it stayed in the pool, and read the rest of the damaged reply) count exactly.
func TestDamagedReplyIsAnErrorAndTheConnectionIsRetired(t *testing.T) {
	cases := []struct {
		name      string
		prefix    string
		retrySafe bool
		user      bool // a user's go-redis client (its default resends) instead of Connect's
	}{
		{"huge bulk length", "$99999999999999999\r\n", false, false},
		{"wrong type byte", "?bad\r\n", true, false},
		{"huge bulk length, user's client", "$99999999999999999\r\n", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redisatomictest.Start(t)
			ctx := testCtx(t)
			direct := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket})
			defer func() { _ = direct.Close() }()
			def := *counter
			def.RetrySafe = tc.retrySafe
			var err error
			def.SHA1, err = direct.ScriptLoad(ctx, def.Body).Result()
			check(t, err)
			proxy := startDropProxy(t, srv, def.SHA1)
			proxy.prefix = []byte(tc.prefix)
			c := damagedClient(t, proxy.addr(), tc.user)
			_, err = c.Run(ctx, &def, []string{"{t}:n"}, nil)
			var u *OutcomeUnknownError
			if !errors.As(err, &u) || !errors.Is(err, ErrBadReply) || u.RetrySafe != tc.retrySafe || u.Attempts != 1 {
				t.Fatalf("want an unknown outcome caused by a bad reply, retry-safe %v: %#v (%v)", tc.retrySafe, u, err)
			}
			for want := int64(2); want <= 4; want++ {
				if n, err := c.Run(ctx, &def, []string{"{t}:n"}, nil); err != nil || n != want {
					t.Fatalf("call after the damaged reply: %v (%v), want %d", n, err, want)
				}
			}
			if n, err := direct.Get(ctx, "{t}:n").Int(); err != nil || n != 4 {
				t.Fatalf("the script ran %d times (%v), want 4", n, err)
			}
		})
	}
}

// damagedClient is a Client through the proxy on one pooled connection, without retries.
func damagedClient(t *testing.T, addr string, user bool) *Client {
	if user {
		rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
		t.Cleanup(func() { _ = rdb.Close() })
		return New(rdb, WithRetryPolicy(NoRetry()))
	}
	c, err := Connect(testCtx(t), "redis://"+addr+"?pool_size=1", WithRetryPolicy(NoRetry()))
	check(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A panic of the caller's own decide is not a reply's: it reaches the caller as it is, and the
// client keeps working.
func TestCasDecidePanicPropagates(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	cas := NewCas(c)
	func() {
		defer func() {
			if r := recover(); r != "decide's own" {
				t.Fatalf("recovered %v, want decide's own panic", r)
			}
		}()
		_, _ = cas.Update(ctx, []Read{ReadGet("{p}:k")}, func(Snapshot) (CasDecision, error) { panic("decide's own") })
	}()
	res, err := cas.Update(ctx, []Read{ReadGet("{p}:k")}, func(Snapshot) (CasDecision, error) {
		return CasCommit(WriteSet("{p}:k", []byte("v"))), nil
	})
	if err != nil || res.Outcome() != "committed" {
		t.Fatalf("%v %v", res, err)
	}
}

// The transactions' hand-offs (MultiWrite's MULTI … EXEC, Cas's WATCH … EXEC) with a damaged
// first reply: an unknown outcome caused by ErrBadReply, and every later write and read on the
// same one-connection client is answered in step (a connection left in the pool would shift
// each reply by one).
func TestDamagedReplyInTransactions(t *testing.T) {
	const huge = "$99999999999999999\r\n"
	cases := []struct {
		name string
		run  func(ctx context.Context, c *Client) error
	}{
		{"multi write", func(ctx context.Context, c *Client) error {
			return NewMultiWrite(WriteSet("{d}:k", []byte("0"))).Execute(ctx, c)
		}},
		{"cas", func(ctx context.Context, c *Client) error {
			_, err := NewCas(c).WithPolicy(NoRetry()).Update(ctx, []Read{ReadGet("{d}:k")},
				func(Snapshot) (CasDecision, error) { return CasCommit(WriteSet("{d}:k", []byte("0"))), nil })
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := redisatomictest.Start(t)
			ctx := testCtx(t)
			proxy := startDropProxy(t, srv, "{d}:k")
			proxy.prefix = []byte(huge)
			c := damagedClient(t, proxy.addr(), false)
			var u *OutcomeUnknownError
			if err := tc.run(ctx, c); !errors.As(err, &u) || !errors.Is(err, ErrBadReply) {
				t.Fatalf("want an unknown outcome caused by a bad reply: %v", err)
			}
			for i := 1; i <= 3; i++ {
				v := strconv.Itoa(i)
				check(t, NewMultiWrite(WriteSet("{d}:k", []byte(v))).Execute(ctx, c))
				if got, err := c.Redis().Get(ctx, "{d}:k").Result(); err != nil || got != v {
					t.Fatalf("read after write %d: %q (%v)", i, got, err)
				}
			}
		})
	}
}
