package redisatomic

import (
	"fmt"
	"strings"
	"time"
)

// Algorithm is a rate-limit algorithm, by its canonical kebab-case name.
type Algorithm string

// The six algorithms (docs/ratelimit.md compares them).
const (
	// FixedWindow: at most Limit units per epoch-aligned window of Period.
	FixedWindow Algorithm = "fixed-window"
	// AnchoredWindow: a fixed window opened by its first request, kept as a counter whose key
	// expiry is the window (the cheapest script; runs on the server's key expiry).
	AnchoredWindow Algorithm = "anchored-window"
	// SlidingLog: at most Limit units in any Period (one entry per unit; Limit ≤ 10 000).
	SlidingLog Algorithm = "sliding-log"
	// SlidingWindow: the sliding window counter (the previous window weighted).
	SlidingWindow Algorithm = "sliding-window"
	// TokenBucket: Burst tokens refilled one every Period/Limit.
	TokenBucket Algorithm = "token-bucket"
	// GCRA: the generic cell rate algorithm: Burst at once from idle, then one per Period/Limit.
	GCRA Algorithm = "gcra"
)

// Algorithms are the six algorithms.
var Algorithms = []Algorithm{FixedWindow, AnchoredWindow, SlidingLog, SlidingWindow, TokenBucket, GCRA}

var algorithmCodes = map[Algorithm]string{FixedWindow: "fw", AnchoredWindow: "aw", SlidingLog: "sl",
	SlidingWindow: "sw", TokenBucket: "tb", GCRA: "gcra"}

// ParseAlgorithm reads an algorithm's name, kebab-case or snake_case (`token-bucket`,
// `token_bucket`).
func ParseAlgorithm(s string) (Algorithm, error) {
	a := Algorithm(strings.ReplaceAll(s, "_", "-"))
	if _, ok := algorithmCodes[a]; !ok {
		return "", wrap(ErrBadArgument, nil, "unknown algorithm %q (fixed-window, anchored-window, "+
			"sliding-log, sliding-window, token-bucket, gcra)", s)
	}
	return a, nil
}

func (a Algorithm) hasBurst() bool { return a == TokenBucket || a == GCRA }

// Bounds of a Limit, as the scripts check them (every product stays an exact Lua integer).
const (
	MaxLimit    = 1_000_000_000
	MaxLogLimit = 10_000
	MaxLimits   = 8
	exact       = 1 << 52
	maxPeriod   = 366 * 24 * time.Hour
)

// Limit is one validated limit: a Limit that exists is one the scripts accept and compute
// exactly. Build it with NewLimit, then WithBurst and Named.
type Limit struct {
	name      string
	algorithm Algorithm
	limit     uint64
	periodUs  uint64
	burst     uint64
}

// NewLimit is limit units per period (1 ms..=366 days) by algorithm; named after the algorithm,
// burst = limit.
func NewLimit(algorithm Algorithm, limit uint64, period time.Duration) (Limit, error) {
	if _, ok := algorithmCodes[algorithm]; !ok {
		return Limit{}, wrap(ErrBadArgument, nil, "unknown algorithm %q", string(algorithm))
	}
	most := uint64(MaxLimit)
	if algorithm == SlidingLog {
		most = MaxLogLimit
	}
	if limit == 0 || limit > most {
		return Limit{}, wrap(ErrBadArgument, nil, "%s limit must be in 1..=%d, got %d", algorithm, most, limit)
	}
	if period < time.Millisecond || period > maxPeriod {
		return Limit{}, wrap(ErrBadArgument, nil, "period must be between 1 ms and 366 days, got %v", period)
	}
	l := Limit{name: string(algorithm), algorithm: algorithm, limit: limit,
		periodUs: uint64(period.Microseconds()), burst: limit}
	return l, l.checkExact()
}

// WithBurst sets the burst (token bucket and GCRA only): how many units fit at once.
func (l Limit) WithBurst(burst uint64) (Limit, error) {
	if !l.algorithm.hasBurst() {
		return Limit{}, wrap(ErrBadArgument, nil, "%s has no burst: its capacity is its limit", l.algorithm)
	}
	if burst == 0 || burst > MaxLimit {
		return Limit{}, wrap(ErrBadArgument, nil, "burst must be in 1..=%d, got %d", MaxLimit, burst)
	}
	l.burst = burst
	return l, l.checkExact()
}

// Named renames the limit (1..=64 bytes of [A-Za-z0-9_.-]); a policy's limits have distinct
// names, part of their keys.
func (l Limit) Named(name string) (Limit, error) {
	ok := name != "" && len(name) <= 64
	for _, r := range name {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.-", r))
	}
	if !ok {
		return Limit{}, wrap(ErrBadArgument, nil, "limit name must be 1..=64 bytes of [A-Za-z0-9_.-], got %q", name)
	}
	l.name = name
	return l, nil
}

func (l Limit) checkExact() error {
	var a, b uint64
	switch l.algorithm {
	case SlidingWindow:
		a, b = l.limit, l.periodUs
	case TokenBucket, GCRA:
		a, b = l.burst, l.intervalUs()
	}
	if b != 0 && a > exact/b {
		return wrap(ErrBadArgument, nil, "%s %d/%v (burst %d) needs more than 52 bits of µs arithmetic; "+
			"use a shorter period or a smaller limit", l.algorithm, l.limit, l.Period(), l.burst)
	}
	return nil
}

// Name is the limit's name (its algorithm's unless Named).
func (l Limit) Name() string { return l.name }

// Algorithm is the limit's algorithm.
func (l Limit) Algorithm() Algorithm { return l.algorithm }

// Limit is the units admitted per period.
func (l Limit) Limit() uint64 { return l.limit }

// Period is the limit's period.
func (l Limit) Period() time.Duration { return time.Duration(l.periodUs) * time.Microsecond }

// Burst is how many units fit at once (the limit, but for token bucket and GCRA).
func (l Limit) Burst() uint64 { return l.burst }

func (l Limit) intervalUs() uint64 { return (l.periodUs + l.limit - 1) / l.limit }

func (l Limit) spec() []any {
	return []any{algorithmCodes[l.algorithm], l.limit, l.periodUs, l.burst}
}

// Policy is 1..=8 limits applied together: a request is charged to every limit or to none.
type Policy struct {
	limits []Limit
}

// NewPolicy is a policy of limits (distinct names).
func NewPolicy(limits ...Limit) (Policy, error) {
	if len(limits) == 0 || len(limits) > MaxLimits {
		return Policy{}, wrap(ErrBadArgument, nil, "a policy has 1..=%d limits, got %d", MaxLimits, len(limits))
	}
	for i, l := range limits {
		if l.limit == 0 {
			return Policy{}, wrap(ErrBadArgument, nil, "limit %d was not built by NewLimit", i)
		}
		for _, o := range limits[:i] {
			if o.name == l.name {
				return Policy{}, wrap(ErrBadArgument, nil, "two limits are named %q", l.name)
			}
		}
	}
	return Policy{limits: append([]Limit(nil), limits...)}, nil
}

// Limits are the policy's limits.
func (p Policy) Limits() []Limit { return append([]Limit(nil), p.limits...) }

// MaxCost is the largest cost a request may ask for: the smallest burst.
func (p Policy) MaxCost() uint64 {
	least := uint64(0)
	for i, l := range p.limits {
		if i == 0 || l.burst < least {
			least = l.burst
		}
	}
	return least
}

func (p Policy) longestPeriod() time.Duration {
	var d time.Duration
	for _, l := range p.limits {
		d = max(d, l.Period())
	}
	return d
}

func (p Policy) checkCost(cost uint64) error {
	if cost == 0 {
		return wrap(ErrBadArgument, nil, "cost must be at least 1")
	}
	if burst := p.MaxCost(); cost > burst {
		return &CostExceedsBurstError{Cost: cost, Burst: burst}
	}
	return nil
}

// CostExceedsBurstError: a request asked for more units than a limit ever holds at once, so no
// wait would admit it; nothing was sent.
type CostExceedsBurstError struct {
	Cost, Burst uint64
}

// Error describes the error.
func (e *CostExceedsBurstError) Error() string {
	return fmt.Sprintf("cost %d exceeds the burst %d: no wait would admit it", e.Cost, e.Burst)
}

// ErrorCode is the vocabulary's error code, cost_exceeds_burst.
func (e *CostExceedsBurstError) ErrorCode() string { return "cost_exceeds_burst" }
