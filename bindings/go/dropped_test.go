package redisatomic

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
	"github.com/redis-atomic/redis-atomic/bindings/go/redisatomictest"
	"github.com/redis/go-redis/v9"
)

// dropProxy forwards TCP connections to a server's unix socket, except that the reply to the
// first request containing `marker` is never delivered: the proxy closes both sides once the
// server answers it (the request ran; its caller cannot know). With a prefix, that reply is
// delivered after the prefix instead (a damaged reply: guard_test.go). With closeOnDrop, the
// proxy stops listening as it drops that reply: every later dial is refused (the server gone).
type dropProxy struct {
	ln          net.Listener
	socket      string
	marker      []byte
	prefix      []byte
	closeOnDrop bool
	mu          sync.Mutex
	dropped     bool
}

func startDropProxy(t *testing.T, srv *redisatomictest.Server, marker string) *dropProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{ln: ln, socket: srv.Socket, marker: []byte(marker)}
	t.Cleanup(func() { _ = ln.Close() })
	go p.serve()
	return p
}

func (p *dropProxy) addr() string { return p.ln.Addr().String() }

func (p *dropProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("unix", p.socket)
		if err != nil {
			_ = client.Close()
			continue
		}
		go p.pipe(client, server)
	}
}

// pipe forwards one connection; requests and replies alternate (no pipelining), so the first
// bytes from the server after the marked request are its reply.
func (p *dropProxy) pipe(client, server net.Conn) {
	defer func() { _ = client.Close(); _ = server.Close() }()
	marked := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 && p.mark(buf[:n]) {
				marked <- struct{}{}
			}
			if n > 0 {
				if _, werr := server.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = server.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		reply := buf[:n]
		select {
		case <-marked:
			if p.prefix == nil {
				if p.closeOnDrop {
					_ = p.ln.Close()
				}
				return // the marked request's reply: dropped with the connection
			}
			reply = append(append([]byte{}, p.prefix...), reply...)
		default:
		}
		if n > 0 {
			if _, werr := client.Write(reply); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// mark reports whether chunk is the first request carrying the marker.
func (p *dropProxy) mark(chunk []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dropped || !bytes.Contains(chunk, p.marker) {
		return false
	}
	p.dropped = true
	return true
}

// counter is a script that is not retry-safe: each run adds one.
var counter = &scripts.ScriptDef{Name: "counter", Body: "return redis.call('INCR', KEYS[1])",
	SHA1: "", Keys: []string{"n"}, RetrySafe: false}

// A call that is not retry-safe whose reply is dropped after the server ran it: ran exactly
// once, and the error is an unknown outcome that says it is not safe to resend. The go-redis
// client is the user's, with go-redis's default resends (MaxRetries 3) on.
func TestDroppedAfterWriteRanOnce(t *testing.T) {
	srv := redisatomictest.Start(t)
	ctx := testCtx(t)
	direct := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket})
	defer func() { _ = direct.Close() }()
	sha, err := direct.ScriptLoad(ctx, counter.Body).Result()
	if err != nil {
		t.Fatal(err)
	}
	def := *counter
	def.SHA1 = sha
	proxy := startDropProxy(t, srv, sha)
	user := redis.NewClient(&redis.Options{Addr: proxy.addr()}) // go-redis defaults: resends on
	defer func() { _ = user.Close() }()
	c := New(user)
	_, err = c.Run(ctx, &def, []string{"{t}:n"}, nil)
	var u *OutcomeUnknownError
	if !errors.As(err, &u) || u.RetrySafe || u.Attempts != 1 || u.TimedOut || Code(err) != "outcome_unknown" {
		t.Fatalf("want an unknown outcome, not retry-safe, after 1 attempt: %#v (%v)", u, err)
	}
	if n, err := direct.Get(ctx, "{t}:n").Int(); err != nil || n != 1 {
		t.Fatalf("the script ran %d times (%v), want 1", n, err)
	}
	// The hazard is real: the same dropped reply on a plain go-redis command is resent.
	proxy.mu.Lock()
	proxy.dropped, proxy.marker = false, []byte("{t}:m")
	proxy.mu.Unlock()
	_ = user.Incr(ctx, "{t}:m").Err()
	if n, err := direct.Get(ctx, "{t}:m").Int(); err != nil || n < 2 {
		t.Fatalf("go-redis resent a plain INCR %d times (%v): the proxy does not drop replies", n, err)
	}
}

// A retry-safe call whose reply is dropped is resent by this module (not by go-redis) and
// succeeds on its second attempt.
func TestDroppedAfterWriteRetrySafeResent(t *testing.T) {
	srv := redisatomictest.Start(t)
	ctx := testCtx(t)
	direct := redis.NewClient(&redis.Options{Network: "unix", Addr: srv.Socket})
	defer func() { _ = direct.Close() }()
	if err := direct.ScriptLoad(ctx, scripts.LockAcquireScript.Body).Err(); err != nil {
		t.Fatal(err)
	}
	proxy := startDropProxy(t, srv, scripts.LockAcquireScript.SHA1)
	c := New(redis.NewClient(&redis.Options{Addr: proxy.addr()}))
	locks := newLocks(t, c)
	res, err := locks.Acquire(ctx, "r", 5*time.Second, WithToken("tok"))
	if err != nil || res.Outcome() != "acquired" {
		t.Fatalf("%#v %v", res, err)
	}
	proxy.mu.Lock()
	dropped := proxy.dropped
	proxy.mu.Unlock()
	if !dropped {
		t.Fatal("the proxy dropped no reply")
	}
	if st, err := locks.Inspect(ctx, "r"); err != nil || st.(Locked).Fence != res.(*Lock).Fence() {
		t.Fatalf("inspect %#v %v", st, err)
	}
}

// An idempotent command (never a script) whose reply is dropped, its resends then refused (the
// server gone): the call's outcome stays unknown, retry-safe, with every attempt counted, as a
// script's does (one retry loop: runner.go), not the last refusal's "nothing ran".
func TestIdempotentUnknownThenRefusedStaysUnknown(t *testing.T) {
	srv := redisatomictest.Start(t)
	ctx := testCtx(t)
	proxy := startDropProxy(t, srv, "{t}:g")
	proxy.closeOnDrop = true
	user := redis.NewClient(&redis.Options{Addr: proxy.addr()})
	defer func() { _ = user.Close() }()
	_, err := New(user).idempotent(ctx, "get", "{t}:g")
	var u *OutcomeUnknownError
	want := DefaultRetryPolicy().MaxAttempts
	if !errors.As(err, &u) || !u.RetrySafe || u.Attempts != want || Code(err) != "outcome_unknown" {
		t.Fatalf("want an unknown outcome, retry-safe, after %d attempts: %#v (%v)", want, u, err)
	}
}
