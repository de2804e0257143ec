package redisatomic

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// RateLimiter applies one Policy to many identities (an API key, a user, an IP), decided on the
// server's clock in one round trip.
//
// Invariant: no limit ever admits more than its algorithm permits, a refused request is charged
// to no limit, and a request id repeated within its TTL is charged once.
//
// Keys (RateLimiter.Keys): `<ns>:rl:v1:{<h>}:<limit name>:<algorithm code>` per limit, and with a
// request id `<ns>:rl:v1:{<h>}:req:<p>:<r>`, where <h> is a SHA-256 digest of the identity (keys
// never carry an API key), <r> of the request id and <p> of the policy's limits.
//
// Retry: without a request id a consume is not retry-safe (a resend may charge twice) and is
// never resent after an unknown outcome; with one (ConsumeWithID) a resend replays the recorded
// decision, so the module resends it.
type RateLimiter struct {
	client     *Client
	namespace  string
	policy     Policy
	scope      string
	requestTTL time.Duration
}

// RateLimitKeys are an identity's keys: Request (with a request id, else "") and one per limit.
type RateLimitKeys struct {
	Request string
	Limits  []string
}

// Bounds of a consume's identity, request id and the request record's TTL.
const (
	maxIdentityLen  = 1024
	maxRequestIDLen = 256
	maxRequestTTL   = 24 * time.Hour
)

// NewRateLimiter applies policy under namespace. A request id is remembered for the policy's
// longest period (at most 24 h): WithRequestTTL changes it.
func NewRateLimiter(client *Client, namespace string, policy Policy) (*RateLimiter, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	if len(policy.limits) == 0 {
		return nil, wrap(ErrBadArgument, nil, "the policy was not built by NewPolicy")
	}
	names := make([]string, len(policy.limits))
	for i, l := range policy.limits {
		names[i] = l.name + ":" + algorithmCodes[l.algorithm]
	}
	return &RateLimiter{client: client, namespace: namespace, policy: policy,
		scope: scopeOf(names), requestTTL: min(policy.longestPeriod(), maxRequestTTL)}, nil
}

// WithRequestTTL sets how long a request id is remembered (1 ms..=24 h).
func (r *RateLimiter) WithRequestTTL(ttl time.Duration) (*RateLimiter, error) {
	if ttl < time.Millisecond || ttl > maxRequestTTL {
		return nil, wrap(ErrBadArgument, nil, "request ttl must be between 1 ms and 24 h, got %v", ttl)
	}
	c := *r
	c.requestTTL = ttl
	return &c, nil
}

// Policy is the limiter's policy.
func (r *RateLimiter) Policy() Policy { return r.policy }

// RequestTTL is how long a request id is remembered.
func (r *RateLimiter) RequestTTL() time.Duration { return r.requestTTL }

// scopeOf digests the parts a request record answers for (a policy's limits, an entry set's
// keys): 16 bytes of SHA-256 of the parts joined by '|', in hex.
func scopeOf(parts []string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "|")))
	return hex.EncodeToString(sum[:16])
}

// digest is the hex of the first 16 bytes of value's SHA-256 (value: 1..=max bytes).
func digest(value string, max int, what string) (string, error) {
	if value == "" || len(value) > max {
		return "", wrap(ErrBadArgument, nil, "%s must be 1..=%d bytes, got %d", what, max, len(value))
	}
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:16]), nil
}

// Keys are identity's keys, and with a request id (at most one; 1..=256 bytes) its record's.
func (r *RateLimiter) Keys(identity string, requestID ...string) (RateLimitKeys, error) {
	if len(requestID) > 1 || (len(requestID) == 1 && requestID[0] == "") {
		return RateLimitKeys{}, wrap(ErrBadArgument, nil, "one request id of 1..=%d bytes", maxRequestIDLen)
	}
	keys, _, err := r.target(identity, append(requestID, "")[0])
	return keys, err
}

// target: the keys, and rl_policy's KEYS[1] ("" when a single-limit script decides).
func (r *RateLimiter) target(identity, requestID string) (RateLimitKeys, string, error) {
	tag, err := digest(identity, maxIdentityLen, "rate-limit key")
	if err != nil {
		return RateLimitKeys{}, "", err
	}
	var keys RateLimitKeys
	for _, l := range r.policy.limits {
		k, err := key(r.namespace, "rl", "1", tag, l.name, algorithmCodes[l.algorithm])
		if err != nil {
			return RateLimitKeys{}, "", err
		}
		keys.Limits = append(keys.Limits, k)
	}
	first := ""
	if requestID != "" {
		id, err := digest(requestID, maxRequestIDLen, "request id")
		if err != nil {
			return RateLimitKeys{}, "", err
		}
		keys.Request, _ = key(r.namespace, "rl", "1", tag, "req", r.scope, id)
		first = keys.Request
	} else if len(keys.Limits) > 1 {
		first, _ = key(r.namespace, "rl", "1", tag, "req", "-") // same slot, never touched
	}
	return keys, first, nil
}

// Consume charges cost units to identity's limits, all or none: Allowed or Limited.
func (r *RateLimiter) Consume(ctx context.Context, identity string, cost uint64) (Decision, error) {
	v, err := r.ConsumeDetailed(ctx, identity, cost, "")
	return v.Decision, err
}

// ConsumeWithID is Consume remembering requestID: a repeat within the request TTL replays the
// first decision and charges nothing, so the call is retry-safe.
func (r *RateLimiter) ConsumeWithID(ctx context.Context, identity string, cost uint64, requestID string) (Decision, error) {
	if requestID == "" {
		return nil, wrap(ErrBadArgument, nil, "request id must be 1..=%d bytes, got 0", maxRequestIDLen)
	}
	v, err := r.ConsumeDetailed(ctx, identity, cost, requestID)
	return v.Decision, err
}

// ConsumeDetailed is Consume (with requestID when it is not "") with every limit's status and
// whether the decision was replayed.
func (r *RateLimiter) ConsumeDetailed(ctx context.Context, identity string, cost uint64, requestID string) (Verdict, error) {
	if err := r.policy.checkCost(cost); err != nil {
		return Verdict{}, err
	}
	keys, first, err := r.target(identity, requestID)
	if err != nil {
		return Verdict{}, err
	}
	if first == "" {
		return r.single(ctx, keys.Limits[0], cost)
	}
	args := scripts.RlPolicyArgs{Cost: cost, RequestId: "", RequestTtlUs: r.requestTTL.Microseconds(), TestNowUs: ""}
	def := scripts.RlPolicyScript
	if requestID != "" {
		args.RequestId = first[strings.LastIndexByte(first, ':')+1:]
		def = retrySafeRlPolicy
	}
	for _, l := range r.policy.limits {
		args.Spec = append(args.Spec, l.spec()...)
	}
	raw, err := r.client.Run(ctx, def, append([]string{first}, keys.Limits...),
		append([]any{args.Cost, args.RequestId, args.RequestTtlUs, args.TestNowUs}, args.Spec...))
	if err != nil {
		return Verdict{}, err
	}
	reply, err := scripts.DecodeRlPolicy(raw)
	if err != nil {
		return Verdict{}, replyError(err)
	}
	return policyVerdict(reply, len(r.policy.limits))
}

// retrySafeRlPolicy is rl_policy sent with a request id: a resend replays, charging nothing.
var retrySafeRlPolicy = func() *scripts.ScriptDef {
	d := *scripts.RlPolicyScript
	d.RetrySafe = true
	return &d
}()

func (r *RateLimiter) single(ctx context.Context, state string, cost uint64) (Verdict, error) {
	l := r.policy.limits[0]
	keys := []string{state}
	var reply scripts.Reply
	var err error
	switch l.algorithm {
	case AnchoredWindow:
		periodMs := (l.periodUs + 999) / 1000
		reply, err = scripts.CallRlAnchoredWindow(ctx, r.client, scripts.RlAnchoredWindowKeys{State: state},
			scripts.RlAnchoredWindowArgs{Cost: cost, Limit: l.limit, PeriodMs: periodMs})
	default:
		var raw any
		raw, err = r.client.Run(ctx, singleScripts[l.algorithm], keys, []any{cost, l.limit, l.periodUs, l.burst, ""})
		if err == nil {
			reply, err = singleDecoders[l.algorithm](raw)
		}
	}
	if err != nil {
		return Verdict{}, replyError(err)
	}
	return singleVerdict(reply)
}

var singleScripts = map[Algorithm]*scripts.ScriptDef{FixedWindow: scripts.RlFixedWindowScript,
	SlidingLog: scripts.RlSlidingLogScript, SlidingWindow: scripts.RlSlidingWindowScript,
	TokenBucket: scripts.RlTokenBucketScript, GCRA: scripts.RlGcraScript}

var singleDecoders = map[Algorithm]func(any) (scripts.Reply, error){
	FixedWindow:   func(raw any) (scripts.Reply, error) { return scripts.DecodeRlFixedWindow(raw) },
	SlidingLog:    func(raw any) (scripts.Reply, error) { return scripts.DecodeRlSlidingLog(raw) },
	SlidingWindow: func(raw any) (scripts.Reply, error) { return scripts.DecodeRlSlidingWindow(raw) },
	TokenBucket:   func(raw any) (scripts.Reply, error) { return scripts.DecodeRlTokenBucket(raw) },
	GCRA:          func(raw any) (scripts.Reply, error) { return scripts.DecodeRlGcra(raw) },
}
