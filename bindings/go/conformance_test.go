package redisatomic

import (
	"errors"
	"fmt"
	"net"
	"testing"
)

// The keys section: every lock.keys and slot case, through Locks.Keys and Slot.
func TestConformanceKeys(t *testing.T) {
	ran := 0
	for _, c := range vectors(t, "keys") {
		id, in := c["id"].(string), c["input"].(map[string]any)
		switch c["call"] {
		case "slot":
			if got, want := Slot(in["key"].(string)), uint16(c["slot"].(float64)); got != want {
				t.Errorf("%s: slot %d, want %d", id, got, want)
			}
		case "lock.keys":
			checkLockKeys(t, id, c, in)
		default:
			keys, err := primitiveKeys(c["call"].(string), in)
			if err == errNoSuchCall {
				t.Errorf("%s: no Go call for %s", id, c["call"])
				continue
			}
			checkKeys(t, id, c, keys, err)
		}
		ran++
	}
	if ran < 50 {
		t.Fatalf("only %d cases ran", ran)
	}
}

func checkLockKeys(t *testing.T, id string, c, in map[string]any) {
	locks, err := NewLocks(New(nil), in["namespace"].(string))
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	keys, err := locks.Keys(in["resource"].(string))
	if want, ok := c["error"]; ok {
		if Code(err) != want {
			t.Errorf("%s: error %v (code %q), want %v", id, err, Code(err), want)
		}
		return
	}
	want := c["keys"].(map[string]any)
	if err != nil || keys.Lock != want["lock"] || keys.Fence != want["fence"] {
		t.Errorf("%s: %+v %v, want %v", id, keys, err, want)
	}
	slot := uint16(c["slot"].(float64))
	if Slot(keys.Lock) != slot || Slot(keys.Fence) != slot {
		t.Errorf("%s: slots %d %d, want %d", id, Slot(keys.Lock), Slot(keys.Fence), slot)
	}
}

// The errors section's server replies: each sent by a real server (a script answering that error
// reply), read by go-redis and classified as every call's error is.
func TestConformanceServerErrors(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	ran := 0
	for _, v := range vectors(t, "errors") {
		reply, ok := v["reply"].(map[string]any)
		if !ok {
			continue
		}
		text := reply["error"].(string)
		_, err := c.send(ctx, "eval", "return redis.error_reply(ARGV[1])", 0, text)
		if err == nil {
			t.Fatalf("%s: the server answered no error", v["id"])
		}
		checkFacts(t, v, classify(ctx, err))
		ran++
	}
	if ran < 15 {
		t.Fatalf("only %d cases ran", ran)
	}
}

// checkFacts compares an error's code and facts with a vector's.
func checkFacts(t *testing.T, v map[string]any, err error) {
	t.Helper()
	got := map[string]any{"error": Code(err), "nothing_ran": NothingRan(err), "transient": IsTransient(err),
		"retry_safe": RetrySafe(err), "timed_out": TimedOut(err)}
	for k, g := range got {
		if fmt.Sprint(v[k]) != fmt.Sprint(g) {
			t.Errorf("%s: %s = %v, want %v (error: %v)", v["id"], k, g, v[k], err)
		}
	}
	if want, ok := v["attempts"]; ok {
		var u *OutcomeUnknownError
		if !errors.As(err, &u) || float64(u.Attempts) != want.(float64) {
			t.Errorf("%s: attempts of %v, want %v", v["id"], err, want)
		}
	}
}

// The connect_refused event, staged for real: Connect to a port just found free.
func TestConformanceConnectRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, err = Connect(testCtx(t), "redis://"+addr)
	for _, v := range vectors(t, "errors") {
		if v["event"] == "connect_refused" {
			checkFacts(t, v, err)
			return
		}
	}
	t.Fatal("no connect_refused case")
}

// The timeout_after_send events of the lock operations, staged for real: the server is stopped
// (SIGSTOP) after a first call loaded the scripts, the second call times out in every attempt.
func TestConformanceTimeoutAfterSend(t *testing.T) {
	ran := 0
	for _, v := range vectors(t, "errors") {
		op, _ := v["operation"].(string)
		if v["event"] != "timeout_after_send" || (op != "lock.acquire" && op != "lock.acquire_with_token") {
			continue
		}
		t.Run(v["id"].(string), func(t *testing.T) { timeoutAfterSend(t, v, op) })
		ran++
	}
	if ran != 2 {
		t.Fatalf("%d lock cases, want 2", ran)
	}
}

func timeoutAfterSend(t *testing.T, v map[string]any, op string) {
	in, client := v["input"].(map[string]any), v["client"].(map[string]any)
	srv := testserverStart(t)
	policy := DefaultRetryPolicy()
	policy.MaxAttempts = int(client["max_attempts"].(float64))
	url := fmt.Sprintf("%s?read_timeout=%dms&write_timeout=%dms&dial_timeout=%dms", srv.URL(),
		int(client["timeout_ms"].(float64)), int(client["timeout_ms"].(float64)), int(client["timeout_ms"].(float64)))
	c, err := Connect(testCtx(t), url, WithRetryPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	locks, err := NewLocks(c, in["namespace"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var opts []AcquireOption
	if op == "lock.acquire_with_token" {
		opts = append(opts, WithToken(in["token"].(string)))
	}
	ttl := msDuration(in["ttl_ms"])
	if _, err := locks.Acquire(testCtx(t), "warm-up", ttl, opts...); err != nil {
		t.Fatal(err)
	}
	srv.Pause()
	_, err = locks.Acquire(testCtx(t), in["resource"].(string), ttl, opts...)
	srv.Resume()
	checkFacts(t, v, err)
}
