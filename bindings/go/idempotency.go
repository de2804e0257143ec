package redisatomic

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Idempotency runs each request's side effect once however often it is sent.
//
// Invariant: at most one live claim per idempotency key; a claim's result, once stored, is what
// every later duplicate gets, and no superseded executor can overwrite or extend it.
//
// Keys (Idempotency.Keys): one string per (scope, key), `<ns>:idem:v1:{<digest>}`, the digest a
// SHA-256 of scope and key (user bytes never reach key names), packing state, fence, owner
// token, request fingerprint, lease end and the stored response.
//
// Mechanism: scripts idem_begin (claim, in progress, replay or mismatch, decided on the server's
// clock), idem_extend, idem_complete; every write checks the claim's token and fence. A claim
// whose lease ran out is taken over by the next Begin with the same fingerprint (its fence
// increases; the old executor's Complete or Fail answers Lost).
//
// Retry: all scripts are retry-safe; Begin without the caller's token is not (the caller never
// saw the token), BeginWithToken is. Not guaranteed: the work between Begin and Complete is only
// as once-only as it is itself fenced (pass Claim.Fence downstream); after a failover a record
// not yet replicated is gone and a duplicate runs again.
type Idempotency struct {
	client    *Client
	namespace string
	config    IdempotencyConfig
}

// IdempotencyConfig are an Idempotency's settings.
type IdempotencyConfig struct {
	// TTL is a claim's lease (default 30 s, at most 24 h).
	TTL time.Duration
	// ResultTTL is how long a stored result is replayed (default 24 h, at most 30 days).
	ResultTTL time.Duration
	// MaxResponseBytes bounds an encoded stored response (default 1 MiB).
	MaxResponseBytes int
}

// DefaultIdempotencyConfig is 30 s claims, results kept 24 h, responses up to 1 MiB.
func DefaultIdempotencyConfig() IdempotencyConfig {
	return IdempotencyConfig{TTL: 30 * time.Second, ResultTTL: 24 * time.Hour, MaxResponseBytes: 1 << 20}
}

const (
	maxIdemKeyLen = 512
	maxIdemTTL    = 24 * time.Hour
	maxResultTTL  = 30 * 24 * time.Hour
)

// IdempotencyKeys are the record of one (scope, key).
type IdempotencyKeys struct{ Record string }

// NewIdempotency is idempotency under namespace with DefaultIdempotencyConfig.
func NewIdempotency(client *Client, namespace string) (*Idempotency, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return &Idempotency{client: client, namespace: namespace, config: DefaultIdempotencyConfig()}, nil
}

// WithConfig replaces the settings (checked).
func (i *Idempotency) WithConfig(config IdempotencyConfig) (*Idempotency, error) {
	if _, err := millis("ttl", config.TTL, maxIdemTTL); err != nil {
		return nil, err
	}
	if _, err := millis("result_ttl", config.ResultTTL, maxResultTTL); err != nil {
		return nil, err
	}
	if config.MaxResponseBytes < 1 {
		return nil, wrap(ErrBadArgument, nil, "max response bytes must be at least 1, got %d", config.MaxResponseBytes)
	}
	c := *i
	c.config = config
	return &c, nil
}

// Config are the settings.
func (i *Idempotency) Config() IdempotencyConfig { return i.config }

// Fingerprint identifies a request's content (16 bytes of SHA-256): a duplicate key with another
// fingerprint is Mismatch.
type Fingerprint [16]byte

// FingerprintOf hashes parts (each length-prefixed, so ("ab","c") and ("a","bc") differ), as
// every face does: the method, the path, the body, ...
func FingerprintOf(parts ...[]byte) Fingerprint {
	h := sha256.New()
	for _, p := range parts {
		_ = binary.Write(h, binary.BigEndian, uint64(len(p)))
		h.Write(p)
	}
	var f Fingerprint
	copy(f[:], h.Sum(nil))
	return f
}

// String is the fingerprint in hex.
func (f Fingerprint) String() string { return hex.EncodeToString(f[:]) }

// Keys are the record of (scope, key) (each 1..=512 bytes).
func (i *Idempotency) Keys(scope string, key []byte) (IdempotencyKeys, error) {
	for what, v := range map[string]int{"scope": len(scope), "idempotency key": len(key)} {
		if v == 0 || v > maxIdemKeyLen {
			return IdempotencyKeys{}, wrap(ErrBadArgument, nil, "%s must be 1..=%d bytes, got %d", what, maxIdemKeyLen, v)
		}
	}
	k, err := keyOf(i.namespace, "idem", FingerprintOf([]byte(scope), key).String())
	return IdempotencyKeys{Record: k}, err
}

func keyOf(ns, primitive, tag string) (string, error) { return key(ns, primitive, "1", tag) }

// BeginResult is what Begin answers: *Claim, InProgress, Replay or Mismatch.
type BeginResult interface {
	Outcome() string
	isBegin()
}

// InProgress: another executor holds a live claim; its lease ends in RetryAfter.
type InProgress struct{ RetryAfter time.Duration }

// Replay: the request already ran; Response is its stored result (Failed: stored by Fail with
// a final response, else by Complete).
type Replay struct {
	Failed   bool
	Response Response
}

// Mismatch: the key was used with another fingerprint (another request's content).
type Mismatch struct{}

// Outcome is "in_progress".
func (InProgress) Outcome() string { return "in_progress" }

// Outcome is "replay".
func (Replay) Outcome() string { return "replay" }

// Outcome is "mismatch".
func (Mismatch) Outcome() string { return "mismatch" }
func (InProgress) isBegin()      {}
func (Replay) isBegin()          {}
func (Mismatch) isBegin()        {}

// Begin claims (scope, key) for a request with fingerprint fp, or says why not.
func (i *Idempotency) Begin(ctx context.Context, scope string, key []byte, fp Fingerprint) (BeginResult, error) {
	res, err := i.BeginWithToken(ctx, scope, key, fp, randomToken())
	return res, retrySafeIf(err, false) // the caller never saw the token
}

// BeginWithToken is Begin with the caller's owner token: while its claim is live the same token
// gets the same fence, so a resend after an unknown outcome is safe.
func (i *Idempotency) BeginWithToken(ctx context.Context, scope string, key []byte, fp Fingerprint, token string) (BeginResult, error) {
	keys, err := i.Keys(scope, key)
	if err == nil {
		err = checkToken(token)
	}
	if err != nil {
		return nil, err
	}
	ttl, _ := millis("ttl", i.config.TTL, maxIdemTTL)
	resultTTL, _ := millis("result_ttl", i.config.ResultTTL, maxResultTTL)
	sent := time.Now()
	reply, err := scripts.CallIdemBegin(ctx, i.client, scripts.IdemBeginKeys{Record: keys.Record},
		scripts.IdemBeginArgs{Token: token, Fingerprint: fp.String(), TtlMs: ttl, ResultTtlMs: resultTTL})
	if err != nil {
		return nil, replyError(err)
	}
	switch r := reply.(type) {
	case scripts.IdemBeginClaimed:
		return i.claim(keys, token, Fence(r.Fence), sent, r.Takeover), nil
	case scripts.IdemBeginInProgress:
		return InProgress{RetryAfter: ms(r.RetryAfterMs)}, nil
	case scripts.IdemBeginReplay:
		resp, err := decodeResponse(r.Payload)
		return Replay{Failed: r.OutcomeValue == "failed", Response: resp}, err
	case scripts.IdemBeginMismatch:
		return Mismatch{}, nil
	}
	return nil, unexpected("idem_begin", reply)
}

// Extend sets the claim of token and fence to end ttl from the server's now: the by-parts twin
// of Claim.Extend.
func (i *Idempotency) Extend(ctx context.Context, scope string, key []byte, token string, fence Fence, ttl time.Duration) (ExtendResult, error) {
	keys, err := i.Keys(scope, key)
	if err != nil {
		return nil, err
	}
	return i.extendRecord(ctx, keys, token, fence, ttl)
}

// Complete stores response as the request's result: the by-parts twin of Claim.Complete.
func (i *Idempotency) Complete(ctx context.Context, scope string, key []byte, token string, fence Fence, response Response) (EndResult, error) {
	keys, err := i.Keys(scope, key)
	if err != nil {
		return nil, err
	}
	return i.finish(ctx, keys, token, fence, "completed", &response)
}

// Fail ends the claim: with a nil final response the key is free for a retry; with one, it is
// stored and replayed (Replay.Failed). The by-parts twin of Claim.Fail.
func (i *Idempotency) Fail(ctx context.Context, scope string, key []byte, token string, fence Fence, final *Response) (EndResult, error) {
	keys, err := i.Keys(scope, key)
	if err != nil {
		return nil, err
	}
	return i.finish(ctx, keys, token, fence, failWord(final), final)
}

func failWord(final *Response) string {
	if final == nil {
		return "retry"
	}
	return "failed"
}
