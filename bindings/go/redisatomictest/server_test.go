package redisatomictest

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Start gives a server that answers on its socket; Stop (the cleanup) removes its folder.
func TestStartServes(t *testing.T) {
	var s *Server
	t.Run("server", func(t *testing.T) {
		s = Start(t)
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Socket})
		defer func() { _ = rdb.Close() }()
		if err := rdb.Set(context.Background(), "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := rdb.Get(context.Background(), "k").Result(); err != nil || v != "v" {
			t.Fatalf("%q %v", v, err)
		}
	})
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Fatalf("folder %s left after the test: %v", s.dir, err)
	}
}
