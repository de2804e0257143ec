package redisatomichttp

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
	"github.com/redis-atomic/redis-atomic/bindings/go/redisatomictest"
)

var shared *redisatomictest.Server

// One real server for the package's tests (each starts on an emptied keyspace).
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

func client(t *testing.T) *redisatomic.Client {
	t.Helper()
	c, err := redisatomic.Connect(context.Background(), shared.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Redis().FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

func do(t *testing.T, srv *httptest.Server, method, path, key, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	req.Header.Set("X-Api-Key", "customer-42")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func text(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// Concurrent duplicates run the handler once; every other answer is the replay (or 409 while it
// runs); another body is 422; no key is 400; a GET passes through.
func TestIdempotencyMiddleware(t *testing.T) {
	store, err := redisatomic.NewIdempotency(client(t), "app")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	entered, release := make(chan struct{}, 1), make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if runs.Add(1) == 1 {
				entered <- struct{}{}
			}
			<-release
		}
		w.Header().Set("Location", "/orders/1")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "created "+r.Header.Get("X-Fence"))
	})
	mw := Idempotency(store, IdempotencyConfig{GenerationHeader: "X-Fence"})
	srv := httptest.NewServer(mw(handler))
	defer srv.Close()
	first := make(chan *http.Response)
	go func() { first <- do(t, srv, "POST", "/orders", "k-1", `{"n":1}`) }()
	<-entered // the first request is inside the handler
	if r := do(t, srv, "POST", "/orders", "k-1", `{"n":1}`); r.StatusCode != 409 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("while running: %d %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
	close(release)
	r := <-first
	if r.StatusCode != 201 || !strings.HasPrefix(text(r), "created ") || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d", r.StatusCode)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(t, srv, "POST", "/orders", "k-1", `{"n":1}`)
			if r.StatusCode != 201 || r.Header.Get("Idempotent-Replayed") != "true" || r.Header.Get("Location") != "/orders/1" {
				t.Errorf("replay: %d %v", r.StatusCode, r.Header)
			}
		}()
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Fatalf("the handler ran %d times", runs.Load())
	}
	for _, c := range []struct {
		method, key, body string
		status            int
	}{
		{"POST", "k-1", `{"n":2}`, 422},
		{"POST", "", `{}`, 400},
		{"POST", "bad\x01key", `{}`, 400},
		{"GET", "", "", 201},
	} {
		req := httptest.NewRequest(c.method, "/orders", strings.NewReader(c.body))
		if c.key != "" {
			req.Header.Set("Idempotency-Key", c.key)
		}
		rec := httptest.NewRecorder()
		mw(handler).ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Errorf("%s key %q: %d", c.method, c.key, rec.Code)
		}
	}
}

// A 5xx is not stored: the key is freed and a retry runs again.
func TestIdempotencyServerErrorFreesKey(t *testing.T) {
	store, _ := redisatomic.NewIdempotency(client(t), "app")
	var runs atomic.Int64
	srv := httptest.NewServer(Idempotency(store, IdempotencyConfig{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})))
	defer srv.Close()
	if r := do(t, srv, "POST", "/x", "k", ""); r.StatusCode != 502 {
		t.Fatalf("first: %d", r.StatusCode)
	}
	if r := do(t, srv, "POST", "/x", "k", ""); r.StatusCode != 200 || runs.Load() != 2 {
		t.Fatalf("retry: %d after %d runs", r.StatusCode, runs.Load())
	}
}

// Exactly limit requests reach the handler; the rest are 429 with Retry-After; every answer has
// the RateLimit headers; a request without a key is 400.
func TestRateLimitMiddleware(t *testing.T) {
	l, _ := redisatomic.NewLimit(redisatomic.GCRA, 5, time.Hour)
	l, _ = l.Named("api")
	p, _ := redisatomic.NewPolicy(l)
	rl, _ := redisatomic.NewRateLimiter(client(t), "app", p)
	mw, err := RateLimit(rl, RateLimitConfig{Key: ByHeader("X-Api-Key"), Unavailable: FailClosed})
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) })))
	defer srv.Close()
	var limited atomic.Int64
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(t, srv, "GET", "/", "", "")
			if r.Header.Get("RateLimit-Policy") != `"api";q=5;w=3600` || !strings.HasPrefix(r.Header.Get("RateLimit"), `"api";r=`) {
				t.Errorf("headers %v", r.Header)
			}
			if r.StatusCode == 429 {
				if r.Header.Get("Retry-After") == "" {
					t.Error("429 without Retry-After")
				}
				limited.Add(1)
			}
		}()
	}
	wg.Wait()
	if served.Load() != 5 || limited.Load() != 25 {
		t.Fatalf("%d served, %d limited", served.Load(), limited.Load())
	}
	rec := httptest.NewRecorder()
	mw(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 400 || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("no key: %d %v", rec.Code, rec.Header())
	}
	if _, err := RateLimit(rl, RateLimitConfig{Key: ByHeader("X")}); err == nil {
		t.Fatal("no Unavailable policy accepted")
	}
}

// The limiter unreachable: FailOpen serves, FailClosed answers 503 + Retry-After: 1; never 429.
func TestRateLimitUnavailable(t *testing.T) {
	srv := redisatomictest.Start(t)
	c, err := redisatomic.Connect(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := redisatomic.NewLimit(redisatomic.FixedWindow, 5, time.Second)
	p, _ := redisatomic.NewPolicy(l)
	rl, _ := redisatomic.NewRateLimiter(c, "app", p)
	_ = c.Close() // every decision now fails
	for policy, want := range map[Unavailable]int{FailOpen: 200, FailClosed: 503} {
		mw, _ := RateLimit(rl, RateLimitConfig{Key: ByHeader("X-Api-Key"), Unavailable: policy})
		h := httptest.NewServer(mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		r := do(t, h, "GET", "/", "", "")
		h.Close()
		if r.StatusCode != want || (want == 503 && r.Header.Get("Retry-After") != "1") {
			t.Errorf("policy %d: %d %v", policy, r.StatusCode, r.Header)
		}
	}
}
