package redisatomictest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of masters only (no replicas), on 127.0.0.1.
type Cluster struct {
	// Nodes are the masters, each serving an equal share of the 16384 slots.
	Nodes []*Server
	// Addrs are their host:port addresses (for redis.ClusterOptions.Addrs).
	Addrs []string
}

// StartCluster starts a cluster of masters (at least 3) for t, stopped when t ends: each node
// listens on a free port (and its cluster bus port + 10000), takes its share of the slots, and
// meets the others; it returns once every node reports the cluster ok.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	if masters < 3 {
		t.Fatalf("a cluster needs at least 3 masters, got %d", masters)
	}
	c := &Cluster{}
	t.Cleanup(c.Stop)
	for range masters {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		s, err := launch("--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
		if err != nil {
			t.Fatal(err)
		}
		c.Nodes, c.Addrs = append(c.Nodes, s), append(c.Addrs, fmt.Sprintf("127.0.0.1:%d", port))
	}
	if err := c.form(); err != nil {
		t.Fatal(err)
	}
	return c
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}

// form assigns the slots, introduces the nodes and waits (bounded) for the cluster to be ok.
func (c *Cluster) form() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := len(c.Nodes)
	for i, s := range c.Nodes {
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Socket})
		first, last := i*16384/n, (i+1)*16384/n-1
		err := rdb.Do(ctx, "cluster", "addslotsrange", first, last).Err()
		if err == nil && i > 0 {
			host, port, _ := net.SplitHostPort(c.Addrs[0])
			err = rdb.Do(ctx, "cluster", "meet", host, port).Err()
		}
		_ = rdb.Close()
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
	}
	for _, s := range c.Nodes {
		if err := awaitOK(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// awaitOK polls a node's CLUSTER INFO until it says cluster_state:ok and knows every slot.
func awaitOK(ctx context.Context, s *Server) error {
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: s.Socket})
	defer func() { _ = rdb.Close() }()
	for {
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("the cluster did not form in 30 s"), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// freePort is a TCP port free now whose cluster bus port (+10000) is free too.
func freePort() (int, error) {
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if port+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+10000)); err == nil {
			_ = bus.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port pair")
}
