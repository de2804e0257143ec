package redisatomic

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/testserver"
)

// connect starts a server and connects a Client to it (closed when the test ends).
func connect(t *testing.T, opts ...Option) (*Client, *testserver.Server) {
	t.Helper()
	srv := testserver.Start(t)
	c, err := Connect(testCtx(t), srv.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, srv
}

// testCtx is a context bounded so a hung test fails instead of hanging.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newLocks(t *testing.T, c *Client) *Locks {
	t.Helper()
	l, err := NewLocks(c, "app")
	if err != nil {
		t.Fatal(err)
	}
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

func testserverStart(t *testing.T) *testserver.Server { return testserver.Start(t) }

func msDuration(v any) time.Duration { return time.Duration(v.(float64)) * time.Millisecond }

// lockFixture is a client on a fresh server, its locks under "app", and a bounded context.
func lockFixture(t *testing.T) (*Client, *Locks, context.Context) {
	c, _ := connect(t)
	return c, newLocks(t, c), testCtx(t)
}
