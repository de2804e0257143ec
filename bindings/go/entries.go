package redisatomic

import (
	"context"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// EntryLimiter decides many identities' limits, each with its own hits, all or nothing in one
// script call: what a gateway request limited per user, per route and globally at once needs
// (Envoy's rate-limit descriptors).
//
// Invariant: with every entry EntryEnforce, either every entry is charged its hits or none is;
// no limit admits more than its algorithm permits; hits 0 charges nothing (it decides as a
// request of one would: a check before work whose cost is known afterwards).
//
// Keys (EntryLimiter.Keys): one hash tag per call, the caller's (a tenant): `<ns>:rl:v1:{<t>}:<i>:
// <limit name>:<algorithm>` per entry (<t>, <i>: digests of the tag and the entry's identity),
// and with a request id `<ns>:rl:v1:{<t>}:req:<p>:<r>`. Not RateLimiter's keys: an entry and a
// policy never share state. Entries naming one key are merged (hits summed) first.
//
// Retry: without a request id not retry-safe; DecideWithID records the admitted decision for the
// entries' longest period and a resend replays it. Not guaranteed: refunds; atomicity across
// tags (one call per tag is all or nothing per call only).
type EntryLimiter struct {
	client    *Client
	namespace string
}

// EntryMode is how an entry takes part in the decision.
type EntryMode string

const (
	// EntryEnforce: refusing refuses the request (the default).
	EntryEnforce EntryMode = "h"
	// EntryShadow: decided and charged when it admits, never refuses the request (to observe a
	// new limit first).
	EntryShadow EntryMode = "s"
	// EntryQuota: the request is refused only when every quota entry refuses.
	EntryQuota EntryMode = "q"
)

func (m EntryMode) stricter(o EntryMode) EntryMode {
	switch {
	case m == EntryEnforce || o == EntryEnforce:
		return EntryEnforce
	case m == EntryQuota || o == EntryQuota:
		return EntryQuota
	}
	return EntryShadow
}

// Entry is one limit of one identity with its hits in a decision.
type Entry struct {
	Limit    Limit
	Identity string
	Hits     uint64
	// Mode is EntryEnforce when empty.
	Mode EntryMode
}

// EntryStatus is one entry's state after a decision (Admits: this entry alone admits).
type EntryStatus struct {
	Admits     bool
	Remaining  uint64
	ResetAfter time.Duration
	RetryAfter time.Duration
}

// EntriesVerdict is a decision with every entry's status (in the caller's order) and whether it
// was replayed.
type EntriesVerdict struct {
	Decision Decision
	Entries  []EntryStatus
	Replayed bool
}

// MaxEntries bounds the entries of one decision.
const MaxEntries = 32

// NewEntryLimiter is the entry limiter under namespace.
func NewEntryLimiter(client *Client, namespace string) (*EntryLimiter, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return &EntryLimiter{client: client, namespace: namespace}, nil
}

// Keys are the entries' state keys under tag, in order.
func (e *EntryLimiter) Keys(tag string, entries []Entry) ([]string, error) {
	t, err := digest(tag, maxIdentityLen, "hash tag")
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(entries))
	for i, en := range entries {
		if keys[i], err = e.key(t, en); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func (e *EntryLimiter) key(t string, en Entry) (string, error) {
	if en.Limit.limit == 0 {
		return "", wrap(ErrBadArgument, nil, "entry limit was not built by NewLimit")
	}
	i, err := digest(en.Identity, maxIdentityLen, "identity")
	if err != nil {
		return "", err
	}
	return key(e.namespace, "rl", "1", t, i, en.Limit.name, algorithmCodes[en.Limit.algorithm])
}

// Decide charges every entry its hits under tag, all or nothing.
func (e *EntryLimiter) Decide(ctx context.Context, tag string, entries []Entry) (EntriesVerdict, error) {
	return e.run(ctx, tag, entries, "")
}

// DecideWithID is Decide remembering requestID: a repeat replays the decision, charging nothing
// (retry-safe).
func (e *EntryLimiter) DecideWithID(ctx context.Context, tag string, entries []Entry, requestID string) (EntriesVerdict, error) {
	if requestID == "" {
		return EntriesVerdict{}, wrap(ErrBadArgument, nil, "request id must be 1..=%d bytes, got 0", maxRequestIDLen)
	}
	return e.run(ctx, tag, entries, requestID)
}

func (e *EntryLimiter) run(ctx context.Context, tag string, entries []Entry, requestID string) (EntriesVerdict, error) {
	keys, err := e.Keys(tag, entries)
	if err != nil {
		return EntriesVerdict{}, err
	}
	merged, group, mkeys, err := mergeEntries(entries, keys)
	if err != nil {
		return EntriesVerdict{}, err
	}
	t, _ := digest(tag, maxIdentityLen, "hash tag")
	first, _ := key(e.namespace, "rl", "1", t, "req", "-")
	def, id := scripts.RlPolicyScript, ""
	if requestID != "" {
		if id, err = digest(requestID, maxRequestIDLen, "request id"); err != nil {
			return EntriesVerdict{}, err
		}
		first, _ = key(e.namespace, "rl", "1", t, "req", scopeOf(mkeys), id)
		def = retrySafeRlPolicy
	}
	var ttl time.Duration
	args := []any{"", id, 0, ""}
	for _, m := range merged {
		ttl = max(ttl, m.Limit.Period())
		mode := m.Mode
		if mode == "" {
			mode = EntryEnforce
		}
		args = append(args, append(m.Limit.spec(), m.Hits, string(mode))...)
	}
	args[2] = min(ttl, maxRequestTTL).Microseconds()
	raw, err := e.client.Run(ctx, def, append([]string{first}, mkeys...), args)
	if err != nil {
		return EntriesVerdict{}, err
	}
	reply, err := scripts.DecodeRlPolicy(raw)
	if err != nil {
		return EntriesVerdict{}, replyError(err)
	}
	v, err := policyVerdict(reply, len(merged))
	if err != nil {
		return EntriesVerdict{}, err
	}
	out := EntriesVerdict{Decision: v.Decision, Replayed: v.Replayed}
	for _, g := range group {
		s := v.Limits[g]
		out.Entries = append(out.Entries, EntryStatus{s.RetryAfter == 0, s.Remaining, s.ResetAfter, s.RetryAfter})
	}
	return out, nil
}

// mergeEntries merges entries naming one key (hits summed, the stricter mode): the merged
// entries, each entry's group, and the merged keys.
func mergeEntries(entries []Entry, keys []string) ([]Entry, []int, []string, error) {
	if len(entries) == 0 || len(entries) > MaxEntries {
		return nil, nil, nil, wrap(ErrBadArgument, nil, "a decision takes 1..=%d entries, got %d", MaxEntries, len(entries))
	}
	var out []Entry
	var mkeys []string
	group := make([]int, len(entries))
	index := map[string]int{}
	for i, en := range entries {
		if en.Mode != "" && en.Mode != EntryEnforce && en.Mode != EntryShadow && en.Mode != EntryQuota {
			return nil, nil, nil, wrap(ErrBadArgument, nil, "unknown entry mode %q", string(en.Mode))
		}
		g, seen := index[keys[i]]
		if !seen {
			index[keys[i]], group[i] = len(out), len(out)
			out, mkeys = append(out, en), append(mkeys, keys[i])
			continue
		}
		if out[g].Limit != en.Limit {
			return nil, nil, nil, wrap(ErrBadArgument, nil, "limit %q of one identity given twice with different settings", en.Limit.name)
		}
		out[g].Hits += en.Hits
		out[g].Mode = modeOr(out[g].Mode).stricter(modeOr(en.Mode))
		group[i] = g
	}
	for _, m := range out {
		if m.Hits > m.Limit.burst {
			return nil, nil, nil, &CostExceedsBurstError{Cost: m.Hits, Burst: m.Limit.burst}
		}
	}
	return out, group, mkeys, nil
}

func modeOr(m EntryMode) EntryMode {
	if m == "" {
		return EntryEnforce
	}
	return m
}
