package redisatomic

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// calls is the server's count of cmd (INFO commandstats), 0 if never run.
func calls(ctx context.Context, t *testing.T, rdb *redis.Client, cmd string) int {
	t.Helper()
	info, err := rdb.Info(ctx, "commandstats").Result()
	check(t, err)
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
		if ok {
			n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			check(t, err)
			return n
		}
	}
	return 0
}

// Without the library a call is EVALSHA; once `redis-atomic functions deploy` loaded it, a new
// client's calls (alone and batched) are FCALLs and no EVALSHA runs.
func TestDeliveryFcallWhenDeployed(t *testing.T) {
	srv := testserverStart(t)
	ctx := testCtx(t)
	direct := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket})
	defer func() { _ = direct.Close() }()
	consume := func(c *Client, n int) {
		rl := hourLimiter(t, c, GCRA, 100)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if d, err := rl.Consume(ctx, "u", 1); err != nil || !d.IsAllowed() {
					t.Errorf("%v %v", d, err)
				}
			})
		}
		wg.Wait()
	}
	before := New(redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket}))
	consume(before, 1)
	if calls(ctx, t, direct, "evalsha") == 0 || calls(ctx, t, direct, "fcall") != 0 {
		t.Fatal("without the library the call is not an EVALSHA")
	}

	out, err := exec.Command(cliBinary(t), "functions", "deploy", "--url", "redis+unix://"+srv.Socket).CombinedOutput()
	if err != nil {
		t.Fatalf("functions deploy: %v\n%s", err, out)
	}
	check(t, direct.ConfigResetStat(ctx).Err())
	c := New(redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket}), oneInFlight())
	lane := heldLane(t, c)
	var wg sync.WaitGroup
	wg.Go(func() { consume(c, 6) })
	queued(ctx, t, lane, 6)
	lane.release(c)
	wg.Wait()
	idle(ctx, t, lane)
	consume(c, 1)
	if s := c.BatchStats(); s.Batches != 2 || s.Batched != 6 || s.Alone != 1 {
		t.Fatalf("want two batches of 3 and one call alone: %+v", s)
	}
	if n := calls(ctx, t, direct, "fcall"); n != 3 || calls(ctx, t, direct, "evalsha") != 0 {
		t.Fatalf("with the library deployed: %d FCALLs (want 3), %d EVALSHAs (want 0)", n, calls(ctx, t, direct, "evalsha"))
	}
}
