package redisatomic

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/redisatomictest"
)

// shared is the package's one server (TestMain): tests run one at a time and each starts on an
// empty keyspace (connect flushes it). Tests that stop or proxy a server start their own.
var shared *redisatomictest.Server

func TestMain(m *testing.M) {
	srv, err := redisatomictest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared = srv
	code := m.Run()
	srv.Stop()
	os.Exit(code)
}

// connect connects a Client to the shared server, emptied first (closed when the test ends).
func connect(t *testing.T, opts ...Option) (*Client, *redisatomictest.Server) {
	t.Helper()
	c, err := Connect(testCtx(t), shared.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Redis().FlushAll(testCtx(t)).Err(); err != nil {
		t.Fatal(err)
	}
	return c, shared
}

// testCtx is a context bounded so a hung test fails instead of hanging.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// check fails the test on err.
func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newLocks(t *testing.T, c *Client) *Locks {
	t.Helper()
	l, err := NewLocks(c, "app")
	check(t, err)
	return l
}

// vectors reads one section of conformance/vectors.json (or $REDIS_ATOMIC_VECTORS).
func vectors(t *testing.T, section string) []map[string]any {
	t.Helper()
	path := os.Getenv("REDIS_ATOMIC_VECTORS")
	if path == "" {
		path = filepath.Join("..", "..", "conformance", "vectors.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var cases []map[string]any
	if err := json.Unmarshal(raw[section], &cases); err != nil || len(cases) == 0 {
		t.Fatalf("section %s: %v (%d cases)", section, err, len(cases))
	}
	return cases
}

func testserverStart(t *testing.T) *redisatomictest.Server { return redisatomictest.Start(t) }

func msDuration(v any) time.Duration { return time.Duration(v.(float64)) * time.Millisecond }

// lockFixture is a client on the emptied shared server, its locks under "app", and a bounded
// context.
func lockFixture(t *testing.T) (*Client, *Locks, context.Context) {
	c, _ := connect(t)
	return c, newLocks(t, c), testCtx(t)
}
