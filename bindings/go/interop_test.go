package redisatomic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cliBinary is the repository's CLI: $REDIS_ATOMIC_BIN, else the binary make test's cargo pass
// built (target/redis-atomic-bin names it), else target/debug/redis-atomic.
func cliBinary(t *testing.T) string {
	if bin := os.Getenv("REDIS_ATOMIC_BIN"); bin != "" {
		return bin
	}
	root := filepath.Join("..", "..", "target")
	if named, err := os.ReadFile(filepath.Join(root, "redis-atomic-bin")); err == nil {
		bin := strings.TrimSpace(string(named))
		if !filepath.IsAbs(bin) {
			bin = filepath.Join("..", "..", bin)
		}
		return bin
	}
	bin := filepath.Join(root, "debug", "redis-atomic")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no redis-atomic CLI (set REDIS_ATOMIC_BIN or build it): %v", err)
	}
	return bin
}

// startServe runs the Rust library's HTTP face (`redis-atomic serve`, namespace "serve") on the
// shared server and returns its base URL; stopped by its pid when the test ends.
func startServe(t *testing.T) string {
	cmd := exec.Command(cliBinary(t), "serve", "--url", "redis+unix://"+shared.Socket, "--listen", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	check(t, err)
	check(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		t.Fatalf("serve printed %q: %v", line, err)
	}
	return strings.TrimSpace(line)
}

func post(t *testing.T, url string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	check(t, err)
	defer func() { _ = resp.Body.Close() }()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// The Go module and the Rust library share keys and scripts: a lock taken in Go is held for the
// Rust library (serve), and the other way round; fences keep increasing across both; a job
// enqueued in Go is claimed by Rust and acked in Go by parts.
func TestInteropWithRustLibrary(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	base := startServe(t)
	locks, err := NewLocks(c, "serve")
	check(t, err)
	res, err := locks.Acquire(ctx, "interop", 10*time.Second)
	check(t, err)
	goLock := res.(*Lock)
	if code, body := post(t, base+"/v1/locks/interop/acquire", map[string]any{"ttl_ms": 1000}); code != 409 || body["acquired"] != false {
		t.Fatalf("rust acquire of a lock Go holds: %d %v", code, body)
	}
	_, err = goLock.Release(ctx)
	check(t, err)
	code, body := post(t, base+"/v1/locks/interop/acquire", map[string]any{"ttl_ms": 10000})
	if code != 200 || Fence(body["fence"].(float64)) <= goLock.Fence() {
		t.Fatalf("rust acquire after Go's release: %d %v (Go's fence %d)", code, body, goLock.Fence())
	}
	if st, err := locks.Inspect(ctx, "interop"); err != nil || st.(Locked).Fence != Fence(body["fence"].(float64)) {
		t.Fatalf("Go inspect of Rust's lock: %#v %v", st, err)
	}
	if held, err := locks.Acquire(ctx, "interop", time.Second); err != nil || held.Outcome() != "held" {
		t.Fatalf("Go acquire of Rust's lock: %#v %v", held, err)
	}
	q, err := NewQueue(c, "serve", "mail", DefaultQueueConfig())
	check(t, err)
	_, err = q.Enqueue(ctx, "job-1", []byte("hello"), 0)
	check(t, err)
	code, body = post(t, base+"/v1/queues/mail/claim", map[string]any{"worker": "rust-w", "visibility_ms": 30000, "max_jobs": 5})
	jobs, _ := body["jobs"].([]any)
	if code != 200 || len(jobs) != 1 || jobs[0].(map[string]any)["payload"] != "hello" {
		t.Fatalf("rust claim: %d %v", code, body)
	}
	fence := Fence(jobs[0].(map[string]any)["fence"].(float64))
	if a, err := q.Ack(ctx, "job-1", "rust-w", fence); err != nil || a != (Acked{}) {
		t.Fatalf("Go ack of Rust's lease: %#v %v", a, err)
	}
}
