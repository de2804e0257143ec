package redisatomic

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Client runs this module's scripts over a go-redis client; the primitives (NewLocks, ...) take
// one. It is safe for concurrent use.
type Client struct {
	rdb      redis.UniversalClient
	owned    bool
	policy   RetryPolicy
	batcher  *batcher
	delivery deliveries
}

// Option configures a Client.
type Option func(*Client)

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(c *Client) { c.policy = p }
}

// Connect builds its own go-redis client from a redis:// or rediss:// URL (go-redis's URL
// options, e.g. `?read_timeout=300ms`, apply) with go-redis's own retries off (MaxRetries -1:
// this module retries, by its rules) and the context's deadline honoured, then checks the
// server answers. A failure is ErrConnection (nothing ran; transient when the network refused).
func Connect(ctx context.Context, url string, opts ...Option) (*Client, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, wrap(ErrBadArgument, err, "bad URL: %v", err)
	}
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	rdb := redis.NewClient(o)
	if err := guarded(func() error { return rdb.Ping(ctx).Err() }); err != nil {
		_ = rdb.Close()
		return nil, wrap(ErrConnection, err, "%v", err)
	}
	c := New(rdb, opts...)
	c.owned = true
	return c, nil
}

// New runs scripts over a go-redis client the caller built (standalone, Sentinel failover or
// Cluster); Close leaves it open. Nothing needs to be set on it: every script call is sent as a
// command that go-redis never resends after it may have reached the server (the command's
// NoRetry), whatever its MaxRetries, so only this module decides what is resent. Set
// ContextTimeoutEnabled on it for a context's deadline to bound a wait for a reply.
func New(rdb redis.UniversalClient, opts ...Option) *Client {
	c := &Client{rdb: rdb, policy: DefaultRetryPolicy(), batcher: newBatcher(DefaultBatching())}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Close closes the go-redis client if Connect built it.
func (c *Client) Close() error {
	if c.owned {
		return c.rdb.Close()
	}
	return nil
}

// Redis is the go-redis client underneath.
func (c *Client) Redis() redis.UniversalClient { return c.rdb }

// noRetry is a go-redis command that go-redis never resends once it may have been written (a
// command it failed to write, e.g. on a connection it found broken first, it still sends).
type noRetry struct{ *redis.Cmd }

// NoRetry tells go-redis not to resend the command.
func (noRetry) NoRetry() bool { return true }

// send sends one command and returns its raw reply or go-redis's error.
func (c *Client) send(ctx context.Context, args ...any) (v any, err error) {
	defer guard(&err)
	cmd := redis.NewCmd(ctx, args...)
	_ = c.rdb.Process(ctx, noRetry{cmd})
	v, err = cmd.Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}
