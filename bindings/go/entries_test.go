package redisatomic

import (
	"errors"
	"testing"
	"time"
)

// Entries all or nothing: a refused enforce entry charges none of the others; a shadow entry
// never refuses; hits 0 checks without charging; a request id replays.
func TestEntryLimiterAllOrNothing(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	el, err := NewEntryLimiter(c, "app")
	check(t, err)
	user, _ := NewLimit(FixedWindow, 2, time.Hour)
	route, _ := NewLimit(SlidingWindow, 100, time.Hour)
	route, _ = route.Named("route")
	entries := []Entry{{Limit: user, Identity: "user-1", Hits: 1}, {Limit: route, Identity: "GET /a", Hits: 1}}
	for i := range 2 {
		v, err := el.Decide(ctx, "tenant", entries)
		if err != nil || !v.Decision.IsAllowed() || v.Entries[1].Remaining != uint64(99-i) {
			t.Fatalf("decide %d: %#v %v", i, v, err)
		}
	}
	v, err := el.Decide(ctx, "tenant", entries)
	if err != nil || v.Decision.IsAllowed() || v.Entries[0].Admits || v.Entries[1].Remaining != 98 {
		t.Fatalf("refused: %#v %v", v, err)
	}
	shadow := []Entry{{Limit: user, Identity: "user-1", Hits: 1, Mode: EntryShadow}, {Limit: route, Identity: "GET /a", Hits: 0}}
	if v, err := el.Decide(ctx, "tenant", shadow); err != nil || !v.Decision.IsAllowed() || v.Entries[1].Remaining != 98 {
		t.Fatalf("shadow: %#v %v", v, err)
	}
	once := []Entry{{Limit: route, Identity: "GET /b", Hits: 3}}
	for range 3 {
		if _, err := el.DecideWithID(ctx, "tenant", once, "req-1"); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := el.Decide(ctx, "tenant", once); err != nil || v.Entries[0].Remaining != 94 {
		t.Fatalf("after a repeated id: %#v %v", v, err)
	}
	var over *CostExceedsBurstError
	twice := []Entry{{Limit: user, Identity: "u", Hits: 2}, {Limit: user, Identity: "u", Hits: 1}}
	if _, err := el.Decide(ctx, "tenant", twice); !errors.As(err, &over) || over.Cost != 3 {
		t.Fatalf("merged hits over burst: %v", err)
	}
	if _, err := el.Decide(ctx, "tenant", nil); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("no entries: %v", err)
	}
}
