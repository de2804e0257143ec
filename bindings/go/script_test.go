package redisatomic

import (
	"errors"
	"testing"
)

// A script of one's own runs by EVALSHA, loaded on NOSCRIPT, with its keys checked for one slot.
func TestRunScript(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	s := Script{Name: "incr_by", Body: "return redis.call('INCRBY', KEYS[1], ARGV[1])"}
	for want := int64(5); want <= 10; want += 5 {
		got, err := c.RunScript(ctx, s, []string{"{u}:n"}, []any{5})
		if err != nil || got != want {
			t.Fatalf("%v %v, want %d", got, err, want)
		}
	}
	if _, err := c.RunScript(ctx, s, []string{"{a}x", "{b}y"}, nil); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("cross slot: %v", err)
	}
	if _, err := c.RunScript(ctx, Script{Name: "empty"}, nil, nil); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("no body: %v", err)
	}
}
