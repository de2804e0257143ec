package redisatomic

// Nothing a server sends may crash the process. go-redis decodes replies on the caller's
// goroutine and some damaged replies make it panic instead of failing: a bulk-string length
// too large to allocate (`makeslice: len out of range` in its reader), or a reply of another
// type than a command's decoder assumes (an interface conversion). Every hand-off of a request
// to go-redis in this module (send, the CAS's WATCH … EXEC, MultiWrite's MULTI … EXEC, the
// Functions probe) defers guard, which turns such a panic into this module's error: an unknown
// outcome (the request was handed over and may have run) whose cause is ErrBadReply, with the
// call's retry class decided as for any unknown outcome (Client.Run).
//
// The connection that panicked never serves another call: go-redis's own deferred release
// (withConn, withPipelineConn, a transaction's sticky pool) marks a connection on which a
// panic unwound as unusable and removes it from the pool before the panic reaches guard, so the
// rest of the damaged reply is never read as another command's reply. A reply go-redis
// refuses without panicking (a wrong type byte) is the same error (classify, malformed).

import "strings"

// guard recovers a panic raised while go-redis wrote a request or read its reply and stores
// it in *err as a bad reply of unknown outcome. Use it only as `defer guard(&err)`.
func guard(err *error) {
	if r := recover(); r != nil {
		if own, ok := r.(callerPanic); ok {
			panic(own.value)
		}
		*err = panicked(r)
	}
}

// callerPanic is a panic of the caller's own code run inside a hand-off (Cas's decide): guard
// raises it again instead of reporting it as a reply.
type callerPanic struct{ value any }

// panicked is the error for a panic value r raised inside go-redis.
func panicked(r any) error {
	return badReply(wrap(ErrBadReply, nil, "the client failed reading the reply: %v", r))
}

// malformed is the error for go-redis's refusal of a reply it cannot parse (its messages are
// the only sign: `redis: can't parse …`, `redis: invalid reply …`), else nil.
func malformed(err error) error {
	for _, p := range []string{"redis: can't parse", "redis: invalid reply", "redis: RESP3 map key"} {
		if strings.HasPrefix(err.Error(), p) {
			return badReply(wrap(ErrBadReply, err, "%v", err))
		}
	}
	return nil
}

// badReply: a reply this module cannot use, after the request was handed over: it may have run.
func badReply(bad error) *OutcomeUnknownError {
	return &OutcomeUnknownError{Reason: bad.Error(), Attempts: 1, cause: bad}
}

// guarded runs fn, a hand-off to go-redis, under guard.
func guarded(fn func() error) (err error) {
	defer guard(&err)
	return fn()
}
