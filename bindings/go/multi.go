package redisatomic

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// MultiWrite is a batch of typed writes applied together with MULTI/EXEC: no client observes
// some of them without the others (an object, its index and their TTLs).
//
// Keys: the caller's, all in one hash slot (checked before sending: ErrCrossSlot). Mechanism:
// MULTI, the writes, EXEC in one round trip on a connection of its own (go-redis's TxPipelined),
// sent so go-redis never resends it. Retry: every Write is idempotent, so after an unknown
// outcome or a refusal the batch is sent again within the client's retry policy. Not
// guaranteed: no rollback (a write to a key of another type fails alone: ErrWrongType, the rest
// applied); no isolation from the past (use Cas when a write depends on a value read);
// asynchronous replication.
type MultiWrite struct{ writes []Write }

// NewMultiWrite is a batch of writes (1..=64).
func NewMultiWrite(writes ...Write) MultiWrite { return MultiWrite{writes: writes} }

// Execute applies the batch on client, all together.
func (m MultiWrite) Execute(ctx context.Context, client *Client) error {
	if err := checkBatch(m.writes); err != nil {
		return err
	}
	cmds, _ := plan(ctx, m.writes[0].key, CasCommit(m.writes...))
	deadline := time.Now().Add(client.policy.Deadline)
	for attempt := 1; ; attempt++ {
		err := m.once(ctx, client, cmds)
		var u *OutcomeUnknownError
		retry := IsTransient(err) || errors.As(err, &u)
		if err == nil || !retry || attempt >= client.policy.MaxAttempts || !pause(ctx, client.policy.backoff(attempt), deadline) {
			return retrySafeIf(err, true)
		}
	}
}

func (m MultiWrite) once(ctx context.Context, client *Client, cmds []redis.Cmder) error {
	if err := ctx.Err(); err != nil {
		return wrap(ErrNotSent, err, "the context ended before sending: %v", err)
	}
	err := guarded(func() error {
		_, err := client.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, cmd := range cmds {
				_ = p.Process(ctx, cmd)
			}
			return nil
		})
		return err
	})
	if err == nil {
		return nil
	}
	for i, cmd := range cmds {
		var server redis.Error
		if errors.As(cmd.Err(), &server) && !isClientSide(cmd.Err()) {
			if e := classifyServerError(server.Error()); errors.Is(e, ErrWrongType) {
				return wrap(ErrWrongType, nil, "write %d (%s %s): %v", i, m.writes[i].op, m.writes[i].key, e)
			}
		}
	}
	return classify(ctx, err)
}
