package redisatomic

import (
	"errors"
	"testing"
	"time"
)

// The zombie case: A's lease expires, B takes the lock (larger fence) and writes; A's late write
// is Stale and B's data stays. Keys must carry the resource's tag.
func TestFencedZombieRefused(t *testing.T) {
	c, locks, ctx := lockFixture(t)
	fw, err := NewFencedWrites(c, "app")
	check(t, err)
	a, _ := locks.Acquire(ctx, "acct", time.Millisecond)
	for {
		st, err := locks.Inspect(ctx, "acct") // wait until A's 1 ms lease is over
		check(t, err)
		if st.Outcome() == "free" {
			break
		}
	}
	b, err := locks.Acquire(ctx, "acct", 10*time.Second)
	check(t, err)
	fa, fb := a.(*Lock).Fence(), b.(*Lock).Fence()
	data, _ := fw.Key("acct", "balance")
	set, _ := fw.Key("acct", "tags")
	res, err := fw.Write(ctx, "acct", fb, WriteSet(data, []byte("B")), WriteSAdd(set, []byte("x"), []byte("y")))
	if err != nil || res != (Written{fb, 2}) {
		t.Fatalf("B: %#v %v", res, err)
	}
	res, err = fw.Write(ctx, "acct", fa, WriteSet(data, []byte("A")), WriteDel(set))
	if err != nil || res != (Stale{fb}) {
		t.Fatalf("A: %#v %v", res, err)
	}
	if v, _ := c.Redis().Get(ctx, data).Result(); v != "B" {
		t.Fatalf("data %q after the stale write", v)
	}
	if n, _ := c.Redis().SCard(ctx, set).Result(); n != 2 {
		t.Fatalf("%d members after the stale write", n)
	}
	if h, err := fw.Highest(ctx, "acct"); err != nil || h != fb {
		t.Fatalf("highest %d %v", h, err)
	}
	for name, err := range map[string]error{
		"other tag": second(fw.Write(ctx, "acct", fb, WriteSet("{other}:x", []byte("v")))),
		"no writes": second(fw.Write(ctx, "acct", fb)),
		"fence 0":   second(fw.Write(ctx, "acct", 0, WriteDel(data))),
		"bad ttl":   second(fw.Write(ctx, "acct", fb, WriteExpire(data, 0))),
		"retention": second(fw.WithRetention(0)),
	} {
		if !errors.Is(err, ErrBadArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
