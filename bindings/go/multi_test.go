package redisatomic

import (
	"errors"
	"testing"
	"time"
)

// A batch applies together; a write to a key of another type fails alone as ErrWrongType;
// keys of two slots are refused before sending.
func TestMultiWrite(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	batch := NewMultiWrite(WriteHSet("{u:1}:profile", map[string][]byte{"name": []byte("ann")}),
		WriteSAdd("{u:1}:sessions", []byte("s1")), WriteExpire("{u:1}:sessions", time.Hour))
	check(t, batch.Execute(ctx, c))
	if v, _ := c.Redis().HGet(ctx, "{u:1}:profile", "name").Result(); v != "ann" {
		t.Fatalf("profile %q", v)
	}
	if ttl, _ := c.Redis().PTTL(ctx, "{u:1}:sessions").Result(); ttl <= 0 {
		t.Fatalf("ttl %v", ttl)
	}
	err := NewMultiWrite(WriteSet("{u:1}:x", []byte("1")), WriteSAdd("{u:1}:profile", []byte("m"))).Execute(ctx, c)
	if !errors.Is(err, ErrWrongType) {
		t.Fatalf("wrong type: %v", err)
	}
	if v, _ := c.Redis().Get(ctx, "{u:1}:x").Result(); v != "1" {
		t.Fatalf("the other write did not apply: %q", v)
	}
	if err := NewMultiWrite(WriteDel("{a}x"), WriteDel("{b}y")).Execute(ctx, c); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("cross slot: %v", err)
	}
	if err := NewMultiWrite().Execute(ctx, c); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("empty: %v", err)
	}
}
