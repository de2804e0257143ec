// Package redisatomic is redis-atomic for Go: the library's primitives as Lua scripts run over
// go-redis v9, with the same keys, the same scripts and the same words (docs/vocabulary.md) as
// the Rust library and its Python and Node packages: locks (Locks), semaphores (Semaphore), the
// watchdog of every lease (Watch), fenced writes (FencedWrites), idempotency keys
// (Idempotency), rate limits (RateLimiter, EntryLimiter), quotas (Quotas), the job queue
// (Queue), event dedup (Dedup) and optimistic CAS (Cas). The guide is docs/go.md; net/http
// middleware is in the package redisatomichttp, a test server in redisatomictest.
//
// # Why pure Go
//
// The decisions are the library's scripts, so a face needs no native code: the scripts are
// generated into this module from their headers (internal/scripts, by `redis-atomic scripts
// bindings --lang go`), and a small runtime sends them. No cgo: static builds and
// cross-compilation keep working.
//
// # Retry safety
//
// A call that failed after it may have reached the server must not be resent unless resending
// cannot repeat its effect. go-redis resends failed commands on its own (MaxRetries, 3 by
// default), including after a connection broke once the command was written. This module sends
// every script call as a command go-redis never resends (its NoRetry), on any client, and
// decides itself: a transient refusal (nothing ran: a refused dial, BUSY, READONLY, NOSCRIPT,
// ...) is retried; an unknown outcome only when the script is retry-safe. Connect builds a client
// with go-redis's retries off as well. Attempts are bounded (RetryPolicy), with full-jitter
// backoff within a deadline and the context's.
//
// # Errors
//
// A refusal by a primitive (a lock held) is a value, never an error. Errors keep the library's
// taxonomy: sentinel errors for errors.Is (ErrNotSent, ErrBadArgument, ErrWrongType,
// ErrCrossSlot, ErrBadReply, ErrConnection, ErrHandleEnded) and typed errors for errors.As
// (*RejectedError, *OutcomeUnknownError, *ServerError). Code(err) gives the vocabulary's code;
// NothingRan, IsTransient, RetrySafe and TimedOut its facts. A context that ends before the
// request is sent is ErrNotSent; after, an *OutcomeUnknownError.
package redisatomic
