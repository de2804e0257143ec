package redisatomic

import (
	"context"
	"sync"
	"time"
)

// Dedup answers whether an event id is seen for the first time: within ttl of an id's first
// sighting exactly one claim token is told true; every other caller false.
//
// Keys (Dedup.Keys): `<ns>:dedup:v1:{event_id}` holds the first sighting's token with the TTL;
// each id is its own hash tag (ids spread over a cluster). Mechanism: one command,
// `SET key token NX PX ttl GET` (Redis ≥ 7.0): nil means this call set it; the caller's own token
// coming back is its own earlier attempt whose reply was lost (still true).
//
// Retry: the token makes the command safe to resend, so the module resends it after an unknown
// outcome; past that, FirstSeenAs with the same token gives the same answer (FirstSeen's token
// is not the caller's: its unknown outcome is not retry-safe). Not guaranteed: after ttl the id
// is forgotten; a failover can lose a recent SET (a duplicate then counts as new); marking an
// event seen is not processing it (use Idempotency for exactly-once effects).
type Dedup struct {
	client    *Client
	namespace string
}

// DedupKeys are an event id's key.
type DedupKeys struct{ Seen string }

const maxDedupTTL = 30 * 24 * time.Hour

// NewDedup is dedup under namespace.
func NewDedup(client *Client, namespace string) (*Dedup, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return &Dedup{client: client, namespace: namespace}, nil
}

// Keys are eventID's key (an id is 1..=512 bytes without '{' or '}').
func (d *Dedup) Keys(eventID string) (DedupKeys, error) {
	k, err := key(d.namespace, "dedup", "1", eventID)
	return DedupKeys{Seen: k}, err
}

// FirstSeen reports whether this is eventID's first sighting within ttl (1 ms..=30 days).
func (d *Dedup) FirstSeen(ctx context.Context, eventID string, ttl time.Duration) (bool, error) {
	first, err := d.FirstSeenAs(ctx, eventID, ttl, randomToken())
	return first, retrySafeIf(err, false)
}

// FirstSeenAs is FirstSeen with the caller's claim token: a repeat with the same token answers
// true again for the sighting it made.
func (d *Dedup) FirstSeenAs(ctx context.Context, eventID string, ttl time.Duration, token string) (bool, error) {
	ttlMs, err := millis("ttl", ttl, maxDedupTTL)
	if err == nil {
		err = checkToken(token)
	}
	if err != nil {
		return false, err
	}
	keys, err := d.Keys(eventID)
	if err != nil {
		return false, err
	}
	return d.claim(ctx, keys.Seen, ttlMs, token)
}

func (d *Dedup) claim(ctx context.Context, key string, ttlMs int64, token string) (bool, error) {
	raw, err := d.client.idempotent(ctx, "set", key, token, "NX", "PX", ttlMs, "GET")
	if err != nil {
		return false, err
	}
	switch v := raw.(type) {
	case nil:
		return true, nil
	case string:
		return v == token, nil
	}
	return false, wrap(ErrBadReply, nil, "SET NX GET: %T", raw)
}

// FirstSeenMany is FirstSeen for up to 1000 ids under one token, sent concurrently (each id its
// own slot): not atomic across ids; an id repeated in the batch is true at most once.
func (d *Dedup) FirstSeenMany(ctx context.Context, eventIDs []string, ttl time.Duration) ([]bool, error) {
	if len(eventIDs) > maxBatch {
		return nil, wrap(ErrBadArgument, nil, "a batch takes at most %d ids, got %d", maxBatch, len(eventIDs))
	}
	ttlMs, err := millis("ttl", ttl, maxDedupTTL)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(eventIDs))
	for i, id := range eventIDs {
		k, err := d.Keys(id)
		if err != nil {
			return nil, err
		}
		keys[i] = k.Seen
	}
	token := randomToken()
	answers, errs := make([]bool, len(keys)), make([]error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = d.claim(ctx, k, ttlMs, token)
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, id := range eventIDs {
		if errs[i] != nil {
			return nil, retrySafeIf(errs[i], false)
		}
		answers[i] = answers[i] && !seen[id]
		seen[id] = true
	}
	return answers, nil
}
