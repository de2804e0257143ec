package redisatomic

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Concurrent read-increment-write through CAS loses no update: the counter ends at the number
// of commits, and every update either committed or reported a conflict.
func TestCasNoLostUpdate(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	cas := NewCas(c).WithPolicy(RetryPolicy{MaxAttempts: 200, Deadline: 30 * time.Second,
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	var commits, conflicts atomic.Int64
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				res, err := cas.Update(ctx, []Read{ReadGet("{acct}:n")}, func(s Snapshot) (CasDecision, error) {
					v, _ := s.String(0)
					n, _ := strconv.Atoi(v)
					return CasCommit(WriteSet("{acct}:n", []byte(strconv.Itoa(n+1)))), nil
				})
				switch {
				case err != nil:
					t.Error(err)
				case res.Outcome() == "committed":
					commits.Add(1)
				default:
					conflicts.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	v, _ := c.Redis().Get(ctx, "{acct}:n").Int64()
	if v != commits.Load() || commits.Load()+conflicts.Load() != 100 || commits.Load() == 0 {
		t.Fatalf("counter %d, %d commits, %d conflicts", v, commits.Load(), conflicts.Load())
	}
	res, err := cas.Update(ctx, []Read{ReadGet("{acct}:n"), ReadExists("{acct}:other")}, func(s Snapshot) (CasDecision, error) {
		if s.Int(1) != 0 {
			t.Errorf("exists %v", s.Values[1])
		}
		return CasAbort(), nil
	})
	if err != nil || res != (Aborted{1}) {
		t.Fatalf("abort: %#v %v", res, err)
	}
	boom, calls := errors.New("boom"), 0
	_, err = cas.Update(ctx, []Read{ReadGet("{acct}:n")}, func(Snapshot) (CasDecision, error) { calls++; return CasDecision{}, boom })
	if err != boom || calls != 1 {
		t.Fatalf("decide error: %v after %d calls (want boom itself, once)", err, calls)
	}
	if _, err := cas.Update(ctx, []Read{{}}, nil); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("a zero Read: %v", err)
	}
	if _, err := cas.Update(ctx, []Read{ReadGet("{a}x"), ReadGet("{b}y")}, nil); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("cross slot: %v", err)
	}
	if _, err := cas.Update(ctx, []Read{ReadGet("{a}x")}, func(Snapshot) (CasDecision, error) {
		return CasCommit(WriteSet("{b}y", nil)), nil
	}); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("write in another slot: %v", err)
	}
}

// Dedup: exactly one of many concurrent first sightings is true; the same token again is true.
func TestDedupFirstSeenOnce(t *testing.T) {
	c, _ := connect(t)
	ctx := testCtx(t)
	d, err := NewDedup(c, "app")
	check(t, err)
	var firsts atomic.Int64
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first, err := d.FirstSeen(ctx, "evt-1", time.Minute)
			if err != nil {
				t.Error(err)
			} else if first {
				firsts.Add(1)
			}
		}()
	}
	wg.Wait()
	if firsts.Load() != 1 {
		t.Fatalf("%d first sightings", firsts.Load())
	}
	for range 2 {
		if first, err := d.FirstSeenAs(ctx, "evt-2", time.Minute, "tok"); !first || err != nil {
			t.Fatalf("own token: %v %v", first, err)
		}
	}
	got, err := d.FirstSeenMany(ctx, []string{"evt-1", "evt-3", "evt-3"}, time.Minute)
	if err != nil || len(got) != 3 || got[0] || !got[1] || got[2] {
		t.Fatalf("many: %v %v", got, err)
	}
	if _, err := d.FirstSeen(ctx, "a{b", time.Minute); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("brace: %v", err)
	}
}
