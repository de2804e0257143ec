package redisatomic

import (
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Decision is what a consume answers: Allowed or Limited (a refusal is a value).
type Decision interface {
	Outcome() string
	// IsAllowed reports whether the request was admitted (and charged).
	IsAllowed() bool
}

// Allowed: admitted and charged; Remaining units are left (the least over the policy's limits)
// and every limit is back to full capacity in ResetAfter.
type Allowed struct {
	Remaining  uint64
	ResetAfter time.Duration
}

// Limited: refused and charged nothing; the same request would be admitted in RetryAfter.
type Limited struct {
	RetryAfter time.Duration
	ResetAfter time.Duration
}

// Outcome is "allowed".
func (Allowed) Outcome() string { return "allowed" }

// IsAllowed is true.
func (Allowed) IsAllowed() bool { return true }

// Outcome is "limited".
func (Limited) Outcome() string { return "limited" }

// IsAllowed is false.
func (Limited) IsAllowed() bool { return false }

// LimitStatus is one limit's state after a decision.
type LimitStatus struct {
	Remaining  uint64
	ResetAfter time.Duration
	RetryAfter time.Duration
}

// Verdict is a decision with every limit's status (in policy order) and whether it was replayed
// from a request id's record.
type Verdict struct {
	Decision Decision
	Limits   []LimitStatus
	Replayed bool
}

func us(n uint64) time.Duration { return time.Duration(n) * time.Microsecond }

// singleVerdict converts the six single-limit scripts' replies (one shape, six generated types).
func singleVerdict(reply scripts.Reply) (Verdict, error) {
	var allowed bool
	var remaining, reset, retry uint64
	switch r := reply.(type) {
	case scripts.RlFixedWindowAllowed:
		allowed, remaining, reset = true, r.Remaining, r.ResetUs
	case scripts.RlAnchoredWindowAllowed:
		allowed, remaining, reset = true, r.Remaining, r.ResetUs
	case scripts.RlSlidingLogAllowed:
		allowed, remaining, reset = true, r.Remaining, r.ResetUs
	case scripts.RlSlidingWindowAllowed:
		allowed, remaining, reset = true, r.Remaining, r.ResetUs
	case scripts.RlTokenBucketAllowed:
		allowed, remaining, reset = true, r.Remaining, r.ResetUs
	case scripts.RlGcraAllowed:
		allowed, remaining, reset = true, r.Remaining, r.ResetUs
	case scripts.RlFixedWindowLimited:
		remaining, reset, retry = r.Remaining, r.ResetUs, r.RetryUs
	case scripts.RlAnchoredWindowLimited:
		remaining, reset, retry = r.Remaining, r.ResetUs, r.RetryUs
	case scripts.RlSlidingLogLimited:
		remaining, reset, retry = r.Remaining, r.ResetUs, r.RetryUs
	case scripts.RlSlidingWindowLimited:
		remaining, reset, retry = r.Remaining, r.ResetUs, r.RetryUs
	case scripts.RlTokenBucketLimited:
		remaining, reset, retry = r.Remaining, r.ResetUs, r.RetryUs
	case scripts.RlGcraLimited:
		remaining, reset, retry = r.Remaining, r.ResetUs, r.RetryUs
	default:
		return Verdict{}, unexpected("rl_*", reply)
	}
	status := LimitStatus{Remaining: remaining, ResetAfter: us(reset), RetryAfter: us(retry)}
	if allowed {
		return Verdict{Decision: Allowed{remaining, us(reset)}, Limits: []LimitStatus{status}}, nil
	}
	return Verdict{Decision: Limited{us(retry), us(reset)}, Limits: []LimitStatus{status}}, nil
}

// policyVerdict converts rl_policy's reply for n limits.
func policyVerdict(reply scripts.RlPolicyReply, n int) (Verdict, error) {
	var v Verdict
	var items []scripts.RlPolicyLimitsItem
	switch p := reply.(type) {
	case scripts.RlPolicyAllowed:
		v.Decision, items = Allowed{p.Remaining, us(p.ResetUs)}, p.Limits
	case scripts.RlPolicyReplayed:
		v.Decision, items, v.Replayed = Allowed{p.Remaining, us(p.ResetUs)}, p.Limits, true
	case scripts.RlPolicyLimited:
		v.Decision, items = Limited{us(p.RetryUs), us(p.ResetUs)}, p.Limits
	default:
		return Verdict{}, unexpected("rl_policy", reply)
	}
	if len(items) != n {
		return Verdict{}, wrap(ErrBadReply, nil, "rl_policy: %d limits in the reply, %d asked", len(items), n)
	}
	for _, it := range items {
		v.Limits = append(v.Limits, LimitStatus{it.Remaining, us(it.ResetUs), us(it.RetryUs)})
	}
	return v, nil
}
