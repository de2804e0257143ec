package redisatomic

import (
	"errors"
	"strconv"
	"time"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// replyError turns the generated layer's *scripts.BadReplyError (an internal type) into
// ErrBadReply; every other error is already this module's.
func replyError(err error) error {
	var bad *scripts.BadReplyError
	if errors.As(err, &bad) {
		return wrap(ErrBadReply, nil, "%s: %s", bad.Script, bad.Detail)
	}
	return err
}

// unexpected: a decoded reply of a variant this module does not handle (a script gained a
// status the module has not learned).
func unexpected(script string, reply scripts.Reply) error {
	return wrap(ErrBadReply, nil, "%s: unexpected status %q", script, reply.Outcome())
}

// retrySafeIf marks an unknown outcome as retry-safe or not, for the call that failed (the
// script may be safe to resend while the call is not: a lock acquire with a token the caller
// never saw).
func retrySafeIf(err error, safe bool) error {
	var u *OutcomeUnknownError
	if errors.As(err, &u) {
		c := *u
		c.RetrySafe = safe
		return &c
	}
	return err
}

func ms(n uint64) time.Duration { return time.Duration(n) * time.Millisecond }

func formatUint(n uint64) string { return strconv.FormatUint(n, 10) }
