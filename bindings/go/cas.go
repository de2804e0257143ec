package redisatomic

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cas is optimistic compare-and-set on the caller's keys: WATCH, read, decide in Go, MULTI/EXEC,
// bounded retries.
//
// Invariant: an attempt's writes apply only if no key it read changed between its WATCH and its
// EXEC, so a commit was decided on the state its writes replaced (no lost update). An abort is
// decided on a consistent snapshot too: it is confirmed by a MULTI/EXEC under the same watch.
//
// Keys: the caller's; every key read and written shares one hash slot (checked before sending).
// Mechanism: go-redis's Watch (a connection of its own per attempt: WATCH is per connection),
// the reads pipelined, then MULTI, the writes, EXEC, sent so go-redis never resends them.
//
// Retry: a conflict (EXEC nil) is retried after a full-jitter pause within the policy (16
// attempts within 2 s by default), then answered Conflict; a failure before EXEC was sent is
// retried the same way; a lost EXEC reply is an *OutcomeUnknownError, not retry-safe (re-running
// decide on top of writes that applied could apply them twice). Not guaranteed: progress on a
// hot key (most attempts abort; a script is cheaper above a handful of contenders); no rollback
// inside EXEC; keys not read are not protected; a failover can lose a commit.
type Cas struct {
	client *Client
	policy RetryPolicy
}

// NewCas is CAS over client with the contention policy (16 attempts within 2 s, backoff 1 ms
// to 50 ms).
func NewCas(client *Client) *Cas {
	return &Cas{client: client, policy: RetryPolicy{MaxAttempts: 16, Deadline: 2 * time.Second,
		BaseBackoff: time.Millisecond, MaxBackoff: 50 * time.Millisecond}}
}

// WithPolicy bounds updates by policy instead.
func (c *Cas) WithPolicy(policy RetryPolicy) *Cas { return &Cas{client: c.client, policy: policy} }

// Read is one read of an attempt (after WATCH on its key).
type Read struct{ args []any }

// ReadGet reads GET key.
func ReadGet(key string) Read { return Read{[]any{"get", key}} }

// ReadHGet reads HGET key field.
func ReadHGet(key, field string) Read { return Read{[]any{"hget", key, field}} }

// ReadHGetAll reads HGETALL key.
func ReadHGetAll(key string) Read { return Read{[]any{"hgetall", key}} }

// ReadSMembers reads SMEMBERS key.
func ReadSMembers(key string) Read { return Read{[]any{"smembers", key}} }

// ReadExists reads EXISTS key.
func ReadExists(key string) Read { return Read{[]any{"exists", key}} }

// ReadPTTL reads PTTL key.
func ReadPTTL(key string) Read { return Read{[]any{"pttl", key}} }

// key is the read's key ("" for a Read not built by a ReadX function: refused, never a panic).
func (r Read) key() string {
	if len(r.args) < 2 {
		return ""
	}
	k, _ := r.args[1].(string)
	return k
}

// Snapshot is what an attempt read, one value per Read in order (go-redis's reply values: nil,
// string, int64, []any, map[any]any).
type Snapshot struct{ Values []any }

// String is read i as a string and whether it exists.
func (s Snapshot) String(i int) (string, bool) {
	v, ok := s.Values[i].(string)
	return v, ok
}

// Int is read i as an integer (0 when missing or not a number).
func (s Snapshot) Int(i int) int64 {
	v, _ := s.Values[i].(int64)
	return v
}

// CasDecision is what decide answers: CasCommit(writes...) or CasAbort().
type CasDecision struct {
	writes []Write
	abort  bool
}

// CasCommit applies writes (0..=64) if nothing read changed.
func CasCommit(writes ...Write) CasDecision { return CasDecision{writes: writes} }

// CasAbort writes nothing (confirmed on a consistent snapshot).
func CasAbort() CasDecision { return CasDecision{abort: true} }

// CasResult is what Update answers: Committed, Aborted or Conflict.
type CasResult interface {
	Outcome() string
	isCas()
}

// Committed: the writes applied on the snapshot decide saw, in attempt Attempts.
type Committed struct{ Attempts int }

// Aborted: decide aborted on a consistent snapshot.
type Aborted struct{ Attempts int }

// Conflict: every attempt saw a key change before EXEC; nothing was written.
type Conflict struct{ Attempts int }

// Outcome is "committed".
func (Committed) Outcome() string { return "committed" }

// Outcome is "aborted".
func (Aborted) Outcome() string { return "aborted" }

// Outcome is "conflict".
func (Conflict) Outcome() string { return "conflict" }
func (Committed) isCas()         {}
func (Aborted) isCas()           {}
func (Conflict) isCas()          {}

// MaxReads bounds the reads of one update.
const MaxReads = 32

// Update reads (1..=32 keys, one slot), calls decide with the snapshot, and applies its writes
// if nothing read changed; retries conflicts within the policy.
func (c *Cas) Update(ctx context.Context, reads []Read, decide func(Snapshot) (CasDecision, error)) (CasResult, error) {
	if len(reads) == 0 || len(reads) > MaxReads {
		return nil, wrap(ErrBadArgument, nil, "an update reads 1..=%d keys, got %d", MaxReads, len(reads))
	}
	keys := make([]string, len(reads))
	for i, r := range reads {
		if keys[i] = r.key(); keys[i] == "" {
			return nil, wrap(ErrBadArgument, nil, "read key must not be empty")
		}
	}
	if err := sameSlot(keys); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.policy.Deadline)
	for attempt := 1; ; attempt++ {
		res, execSent, err := c.attempt(ctx, reads, keys, decide, attempt)
		var u *OutcomeUnknownError
		var own decideError
		if errors.As(err, &own) {
			return nil, own.err // decide's own error: returned as it is, never retried
		}
		retry := (err == nil && res == nil) || IsTransient(err) || (errors.As(err, &u) && !execSent)
		if !retry || attempt >= c.policy.MaxAttempts || !pause(ctx, c.policy.backoff(attempt), deadline) {
			if err == nil && res == nil {
				return Conflict{Attempts: attempt}, nil
			}
			return res, retrySafeIf(err, false)
		}
	}
}

// attempt is one WATCH … EXEC; (nil, _, nil) is a conflict.
func (c *Cas) attempt(ctx context.Context, reads []Read, keys []string, decide func(Snapshot) (CasDecision, error), n int) (CasResult, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, wrap(ErrNotSent, err, "the context ended before sending: %v", err)
	}
	var res CasResult
	execSent := false
	watch := func(tx *redis.Tx) error {
		snap, err := readAll(ctx, tx, reads)
		if err != nil {
			return err
		}
		d, err := callDecide(decide, snap)
		if err != nil {
			return decideError{err}
		}
		cmds, err := plan(ctx, keys[0], d)
		if err != nil {
			return err
		}
		execSent = true
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, cmd := range cmds {
				_ = p.Process(ctx, cmd)
			}
			return nil
		})
		if err == nil {
			res = Committed{Attempts: n}
			if d.abort {
				res = Aborted{Attempts: n}
			}
		}
		return err
	}
	err := guarded(func() error { return c.client.rdb.Watch(ctx, watch, keys...) })
	if errors.Is(err, redis.TxFailedErr) {
		return nil, true, nil
	}
	var own decideError
	if errors.As(err, &own) {
		return nil, false, own
	}
	if err != nil && Code(err) == "" {
		err = classify(ctx, err)
	}
	return res, execSent, err
}

// callDecide calls the caller's decide; a panic of it leaves through guard as it is (the
// caller's own, not a reply's).
func callDecide(decide func(Snapshot) (CasDecision, error), snap Snapshot) (CasDecision, error) {
	defer func() {
		if r := recover(); r != nil {
			panic(callerPanic{r})
		}
	}()
	return decide(snap)
}

// decideError carries decide's own error out of go-redis's Watch untouched.
type decideError struct{ err error }

func (e decideError) Error() string { return e.err.Error() }

func readAll(ctx context.Context, tx *redis.Tx, reads []Read) (Snapshot, error) {
	cmds := make([]*redis.Cmd, len(reads))
	_, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range reads {
			cmds[i] = redis.NewCmd(ctx, r.args...)
			_ = p.Process(ctx, cmds[i])
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return Snapshot{}, err
	}
	snap := Snapshot{Values: make([]any, len(reads))}
	for i, cmd := range cmds {
		v, err := cmd.Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return Snapshot{}, err
		}
		snap.Values[i] = v
	}
	return snap, nil
}

// plan is the commands of an EXEC: the writes (in the reads' slot), or a PING confirming an
// abort; each sent so go-redis never resends the transaction.
func plan(ctx context.Context, readKey string, d CasDecision) ([]redis.Cmder, error) {
	if d.abort || len(d.writes) == 0 {
		return []redis.Cmder{noRetry{redis.NewCmd(ctx, "ping")}}, nil
	}
	if err := checkBatch(d.writes); err != nil {
		return nil, err
	}
	if err := sameSlot([]string{readKey, d.writes[0].key}); err != nil {
		return nil, err
	}
	cmds := make([]redis.Cmder, 0, len(d.writes))
	for _, w := range d.writes {
		args, _ := w.command()
		all := []any{w.op, w.key}
		for _, a := range args {
			all = append(all, a)
		}
		cmds = append(cmds, noRetry{redis.NewCmd(ctx, all...)})
	}
	return cmds, nil
}
