package redisatomic

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent duplicates of one request: the side effect runs once, and every duplicate ends up
// with the stored response.
func TestIdempotencyOnceUnderConcurrentDuplicates(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	idem, err := NewIdempotency(c, "app")
	check(t, err)
	fp := FingerprintOf([]byte("POST"), []byte("/orders"), []byte(`{"n":1}`))
	var effects, replays atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				res, err := idem.Begin(ctx, "tenant-1", []byte("key-1"), fp)
				if err != nil {
					t.Error(err)
					return
				}
				switch r := res.(type) {
				case *Claim:
					effects.Add(1)
					resp := Response{Status: 201, Headers: []Header{{"Location", []byte("/orders/1")}}, Body: []byte("made")}
					if end, err := r.Complete(ctx, resp); err != nil || end != (Stored{}) {
						t.Errorf("complete: %v %v", end, err)
					}
					return
				case Replay:
					if r.Failed || r.Response.Status != 201 || !bytes.Equal(r.Response.Body, []byte("made")) ||
						string(r.Response.Headers[0].Value) != "/orders/1" {
						t.Errorf("replay %#v", r)
					}
					replays.Add(1)
					return
				case InProgress:
					if r.RetryAfter <= 0 {
						t.Errorf("in progress, retry after %v", r.RetryAfter)
					}
				default:
					t.Errorf("%#v", res)
					return
				}
			}
		}()
	}
	wg.Wait()
	if effects.Load() != 1 || replays.Load() != 99 {
		t.Fatalf("%d side effects, %d replays", effects.Load(), replays.Load())
	}
	if res, err := idem.Begin(ctx, "tenant-1", []byte("key-1"), FingerprintOf([]byte("other"))); err != nil || res != (Mismatch{}) {
		t.Fatalf("other fingerprint: %#v %v", res, err)
	}
}

// A claim that ran out is taken over (larger fence); the old executor's end is Lost and the new
// one's result stands. Fail without a final response frees the key.
func TestIdempotencyTakeoverAndFail(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	base, _ := NewIdempotency(c, "app")
	cfg := DefaultIdempotencyConfig()
	cfg.TTL = time.Millisecond
	short, err := base.WithConfig(cfg)
	check(t, err)
	fp := FingerprintOf([]byte("x"))
	first, err := short.Begin(ctx, "s", []byte("k"), fp)
	check(t, err)
	old := first.(*Claim)
	var taken *Claim
	for taken == nil { // until the 1 ms lease is over
		res, err := base.Begin(ctx, "s", []byte("k"), fp)
		check(t, err)
		taken, _ = res.(*Claim)
	}
	if !taken.IsTakeover() || taken.Fence() <= old.Fence() {
		t.Fatalf("takeover %v, fence %d after %d", taken.IsTakeover(), taken.Fence(), old.Fence())
	}
	if end, err := old.Complete(ctx, Response{Status: 200}); err != nil || end != (Lost{}) {
		t.Fatalf("stale complete: %#v %v", end, err)
	}
	if ext, err := taken.Extend(ctx, time.Minute); err != nil || ext.Outcome() != "extended" {
		t.Fatalf("extend: %#v %v", ext, err)
	}
	if end, err := taken.Fail(ctx, nil); err != nil || end != (Stored{}) {
		t.Fatalf("fail: %#v %v", end, err)
	}
	if _, err := taken.Complete(ctx, Response{}); !errors.Is(err, ErrHandleEnded) {
		t.Fatalf("after fail: %v", err)
	}
	again, err := base.Begin(ctx, "s", []byte("k"), fp)
	if err != nil || again.Outcome() != "claimed" {
		t.Fatalf("after a retryable failure: %#v %v", again, err)
	}
	final := Response{Status: 422, Reference: "s3://bucket/err"}
	if end, err := again.(*Claim).Fail(ctx, &final); err != nil || end != (Stored{}) {
		t.Fatalf("final fail: %v %v", end, err)
	}
	if res, err := base.Begin(ctx, "s", []byte("k"), fp); err != nil || !res.(Replay).Failed ||
		res.(Replay).Response.Reference != "s3://bucket/err" {
		t.Fatalf("replay of a failure: %#v %v", res, err)
	}
	big := DefaultIdempotencyConfig()
	big.MaxResponseBytes = 10
	small, _ := base.WithConfig(big)
	claim, _ := small.Begin(ctx, "s", []byte("big"), fp)
	if _, err := claim.(*Claim).Complete(ctx, Response{Body: make([]byte, 20)}); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("oversized: %v", err)
	}
	if _, err := base.Begin(ctx, "", []byte("k"), fp); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("empty scope: %v", err)
	}
}

// A stored response that is not R1 is ErrBadReply, never a panic.
func TestIdempotencyMalformedResponse(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("R1"), []byte("R1\x00\xc8\x00\x05\x00"), []byte("R1\x00\xc8\x00\x00\x07"), []byte("XX\x00\x00\x00\x00\x00")} {
		if _, err := decodeResponse(b); !errors.Is(err, ErrBadReply) {
			t.Errorf("%q: %v", b, err)
		}
	}
	r := Response{Status: 200, Headers: []Header{{"a", []byte("b")}}, Body: []byte{0, 1}}
	enc, _ := r.encode()
	if got, err := decodeResponse(enc); err != nil || got.Status != 200 || !bytes.Equal(got.Body, r.Body) {
		t.Fatalf("round trip %#v %v", got, err)
	}
}
