// Package redisatomichttp is net/http middleware on redis-atomic's primitives, with the
// semantics and header spellings of the Rust library's tower layers (redis-atomic-http) and of
// `redis-atomic serve`:
//
//   - Idempotency: the IETF Idempotency-Key header draft (400 without or with a malformed key,
//     409 + Retry-After while the same key runs, 422 for the same key with another request, the
//     stored response replayed with `Idempotent-Replayed: true`).
//   - RateLimit: 429 + Retry-After when refused (the handler does not run), `RateLimit-Policy`
//     and `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers), and an explicit FailOpen
//     or FailClosed policy when the limiter cannot decide (never a 429 then: the client was not
//     over its quota).
//
// Each is a func(http.Handler) http.Handler. Error bodies are application/problem+json.
//
// Why a package of its own: a service that only locks or queues has no use for it, and its
// names (Idempotency, RateLimit) would crowd the primitives' package.
package redisatomichttp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// problem writes an application/problem+json answer.
func problem(w http.ResponseWriter, status int, detail string) {
	body, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}{"about:blank", http.StatusText(status), status, detail})
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// ceilSecs is d in whole seconds, rounded up (what Retry-After and RateLimit's t carry).
func ceilSecs(d time.Duration) int64 {
	return (d.Microseconds() + 999_999) / 1_000_000
}

// retryAfter sets Retry-After to d in whole seconds, at least 1.
func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.FormatInt(max(ceilSecs(d), 1), 10))
}
