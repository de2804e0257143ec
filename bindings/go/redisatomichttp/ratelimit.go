package redisatomichttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
)

// Unavailable is what RateLimit does when the limiter cannot decide (Redis down, erroring, or
// slower than the timeout). There is no default: it is always a choice.
type Unavailable int

const (
	// FailOpen serves the request unlimited (and logs): availability over protection.
	FailOpen Unavailable = iota + 1
	// FailClosed answers 503 with Retry-After: 1: protection over availability.
	FailClosed
)

// RateLimitConfig are RateLimit's settings.
type RateLimitConfig struct {
	// Key picks the rate-limited identity (API key, user, client IP); false: no key, answered
	// MissingKey.
	Key func(*http.Request) (string, bool)
	// Cost is a request's cost in units (1 when nil).
	Cost func(*http.Request) uint64
	// Unavailable is required: FailOpen or FailClosed.
	Unavailable Unavailable
	// Timeout bounds the wait for a decision (250 ms when 0); past it Unavailable applies.
	Timeout time.Duration
	// MissingKey is the status for a request without a key (400 when 0).
	MissingKey int
}

// ByHeader is a Key reading request header name (a missing or empty header: no key).
func ByHeader(name string) func(*http.Request) (string, bool) {
	return func(r *http.Request) (string, bool) {
		v := r.Header.Get(name)
		return v, v != ""
	}
}

// RateLimit limits requests with limiter: refused → 429 + Retry-After (the handler does not
// run); every answer carries RateLimit-Policy and RateLimit; a cost above every burst → 400.
func RateLimit(limiter *redisatomic.RateLimiter, cfg RateLimitConfig) (func(http.Handler) http.Handler, error) {
	if cfg.Unavailable != FailOpen && cfg.Unavailable != FailClosed {
		return nil, fmt.Errorf("%w: RateLimitConfig.Unavailable must be FailOpen or FailClosed", redisatomic.ErrBadArgument)
	}
	if cfg.Key == nil {
		return nil, fmt.Errorf("%w: RateLimitConfig.Key is required", redisatomic.ErrBadArgument)
	}
	cfg.Timeout = cmp(cfg.Timeout, 250*time.Millisecond)
	cfg.MissingKey = cmp(cfg.MissingKey, http.StatusBadRequest)
	limits := limiter.Policy().Limits()
	policy := PolicyHeader(limits)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key, ok := cfg.Key(r)
			if !ok {
				problem(w, cfg.MissingKey, "no rate-limit key in the request")
				return
			}
			cost := uint64(1)
			if cfg.Cost != nil {
				cost = cfg.Cost(r)
			}
			ctx, cancel := context.WithTimeout(r.Context(), cfg.Timeout)
			v, err := limiter.ConsumeDetailed(ctx, key, cost, "")
			cancel()
			var over *redisatomic.CostExceedsBurstError
			switch {
			case errors.As(err, &over) || errors.Is(err, redisatomic.ErrBadArgument):
				problem(w, http.StatusBadRequest, "the request costs more than the rate limit admits at once")
				return
			case err != nil:
				unavailable(w, r, next, cfg.Unavailable, err)
				return
			}
			w.Header().Set("RateLimit-Policy", policy)
			w.Header().Set("RateLimit", RateLimitHeader(limits, v))
			if l, limited := v.Decision.(redisatomic.Limited); limited {
				retryAfter(w, l.RetryAfter)
				problem(w, http.StatusTooManyRequests, "rate limit exceeded")
				return
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

func unavailable(w http.ResponseWriter, r *http.Request, next http.Handler, policy Unavailable, err error) {
	if policy == FailOpen {
		slog.Warn("rate limiter unavailable; request served unlimited (fail open)", "error", err)
		next.ServeHTTP(w, r)
		return
	}
	slog.Warn("rate limiter unavailable; request refused (fail closed)", "error", err)
	w.Header().Set("Retry-After", "1")
	problem(w, http.StatusServiceUnavailable, "rate limiter unavailable; retry later")
}

// PolicyHeader is the RateLimit-Policy value of limits: `"name";q=<limit>[;w=<seconds>], ...`
// (w when the period is whole seconds).
func PolicyHeader(limits []redisatomic.Limit) string {
	items := make([]string, len(limits))
	for i, l := range limits {
		items[i] = fmt.Sprintf("%q;q=%d", l.Name(), l.Limit())
		if p := l.Period(); p%time.Second == 0 {
			items[i] += fmt.Sprintf(";w=%d", p/time.Second)
		}
	}
	return strings.Join(items, ", ")
}

// RateLimitHeader is the RateLimit value of a verdict: `"name";r=<remaining>;t=<seconds>, ...`,
// t the wait until that limit admits this request again if it refused, else until it is full.
func RateLimitHeader(limits []redisatomic.Limit, v redisatomic.Verdict) string {
	items := make([]string, 0, len(limits))
	for i, s := range v.Limits {
		if i >= len(limits) {
			break
		}
		t := s.ResetAfter
		if s.RetryAfter != 0 {
			t = s.RetryAfter
		}
		items = append(items, fmt.Sprintf("%q;r=%d;t=%d", limits[i].Name(), s.Remaining, ceilSecs(t)))
	}
	return strings.Join(items, ", ")
}

// cmp is v, or def when v is the zero value.
func cmp[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
