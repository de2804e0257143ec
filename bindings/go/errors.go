package redisatomic

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes: the vocabulary's (docs/vocabulary.md), the same strings in every face.
const (
	codeNotSent        = "not_sent"
	codeRejected       = "rejected"
	codeOutcomeUnknown = "outcome_unknown"
	codeWrongType      = "wrong_type"
	codeBadArgument    = "bad_argument"
	codeBadReply       = "bad_reply"
	codeCrossSlot      = "cross_slot"
	codeServerError    = "server_error"
	codeConnection     = "connection"
	codeClient         = "client"
	codeHandleEnded    = "handle_ended"
)

// sentinel is an error class without fields; returned errors wrap it (test with errors.Is).
type sentinel struct{ code, text string }

// Error describes the error.
func (e *sentinel) Error() string { return e.text }

// ErrorCode is the vocabulary's error code.
func (e *sentinel) ErrorCode() string { return e.code }

// Sentinel errors, for errors.Is. The returned error wraps one of them with a message (and its
// cause, when there is one).
var (
	// ErrNotSent: the request never reached a server; nothing ran. Safe to retry.
	ErrNotSent error = &sentinel{codeNotSent, "not sent"}
	// ErrWrongType: a key holds a value of another type; a script may have written before.
	ErrWrongType error = &sentinel{codeWrongType, "wrong type at key"}
	// ErrBadArgument: an argument was refused, by this module before sending or by the script.
	ErrBadArgument error = &sentinel{codeBadArgument, "bad argument"}
	// ErrBadReply: the server answered in a shape this module does not know; the call ran.
	ErrBadReply error = &sentinel{codeBadReply, "bad reply"}
	// ErrCrossSlot: the keys of one call span hash slots; nothing ran.
	ErrCrossSlot error = &sentinel{codeCrossSlot, "keys span more than one hash slot"}
	// ErrConnection: could not connect; nothing ran.
	ErrConnection error = &sentinel{codeConnection, "connection"}
	// ErrClient: the client failed on its own side before anything was sent.
	ErrClient error = &sentinel{codeClient, "client"}
	// ErrHandleEnded: a handle's end verb (Release) was already called; nothing was sent.
	ErrHandleEnded error = &sentinel{codeHandleEnded, "the handle has ended"}
)

// wrapped is a sentinel with a message and an optional cause.
type wrapped struct {
	kind  *sentinel
	msg   string
	cause error
}

func wrap(kind error, cause error, format string, a ...any) error {
	return &wrapped{kind.(*sentinel), fmt.Sprintf(format, a...), cause}
}

// Error describes the error.
func (e *wrapped) Error() string { return e.kind.text + ": " + e.msg }

// ErrorCode is the vocabulary's error code.
func (e *wrapped) ErrorCode() string { return e.kind.code }

// Unwrap gives the sentinel and the cause, so errors.Is finds both.
func (e *wrapped) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// RejectedError: a server refused the request before running it (BUSY, READONLY, OOM, ...);
// nothing ran.
type RejectedError struct {
	// Code is the server's error code (`BUSY`, ...); the vocabulary's code is ErrorCode's.
	Code    string
	Message string
}

// Error describes the error.
func (e *RejectedError) Error() string {
	return fmt.Sprintf("rejected by the server before running (%s): %s", e.Code, e.Message)
}

// ErrorCode is the vocabulary's error code, rejected (the server's code is the field Code).
func (e *RejectedError) ErrorCode() string { return codeRejected }

// OutcomeUnknownError: the request may or may not have run (a timeout, a connection lost after
// sending, a context cancelled after sending).
type OutcomeUnknownError struct {
	Reason string
	// Attempts made, the last of which had this outcome.
	Attempts int
	// TimedOut: the client gave up waiting in some attempt.
	TimedOut bool
	// RetrySafe: resending the same call cannot repeat its effect.
	RetrySafe bool
	cause     error
}

// Error describes the error.
func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("outcome unknown after %d attempt(s): %s", e.Attempts, e.Reason)
}

// ErrorCode is the vocabulary's error code, outcome_unknown.
func (e *OutcomeUnknownError) ErrorCode() string { return codeOutcomeUnknown }

// Unwrap gives the last attempt's cause (a net error, context.DeadlineExceeded, ...).
func (e *OutcomeUnknownError) Unwrap() error { return e.cause }

// ServerError: any other server error (a script's runtime error, an ACL refusal); the script may
// have written before it failed.
type ServerError struct {
	// Code is the server's error code (`ERR`, `NOPERM`, ...).
	Code    string
	Message string
}

// Error describes the error.
func (e *ServerError) Error() string { return fmt.Sprintf("server error (%s): %s", e.Code, e.Message) }

// ErrorCode is the vocabulary's error code, server_error.
func (e *ServerError) ErrorCode() string { return codeServerError }

// Codes of replies that mean "refused before running" and are worth retrying soon.
var transientCodes = map[string]bool{
	"NOSCRIPT": true, "BUSY": true, "LOADING": true, "READONLY": true, "NOREPLICAS": true,
	"MOVED": true, "ASK": true, "TRYAGAIN": true, "CLUSTERDOWN": true, "MASTERDOWN": true,
}

// Codes of replies that mean "refused before running" but will not clear by themselves soon.
var refusedCodes = map[string]bool{"OOM": true, "MISCONF": true, "NOTBUSY": true}

// classifyServerError classifies a server's error reply ("CODE message") by its code, as the
// library's Error::from_server_error: the message is read only for `ERR redis-atomic: ...`, the
// scripts' own refusal of an argument.
func classifyServerError(reply string) error {
	code, message, _ := strings.Cut(reply, " ")
	switch {
	case transientCodes[code] || refusedCodes[code]:
		return &RejectedError{Code: code, Message: message}
	case code == "WRONGTYPE":
		return wrap(ErrWrongType, nil, "%s", message)
	case code == "CROSSSLOT":
		return wrap(ErrCrossSlot, nil, "refused by the server")
	case code == "ERR" && strings.HasPrefix(message, "redis-atomic:"):
		return wrap(ErrBadArgument, nil, "%s", strings.TrimSpace(strings.TrimPrefix(message, "redis-atomic:")))
	}
	return &ServerError{Code: code, Message: message}
}

// Code is the vocabulary's code of err (`not_sent`, `rejected`, `outcome_unknown`, ...), or ""
// when err is not one of this module's errors.
func Code(err error) string {
	var typed interface{ ErrorCode() string }
	if errors.As(err, &typed) {
		return typed.ErrorCode()
	}
	return ""
}

// NothingRan reports whether nothing ran, so a retry cannot repeat an effect.
func NothingRan(err error) bool {
	switch Code(err) {
	case codeNotSent, codeRejected, codeCrossSlot, codeBadArgument, codeConnection, codeClient,
		codeHandleEnded, "cost_exceeds_burst":
		return true
	}
	return false
}

// IsTransient reports whether a prompt retry may succeed and cannot repeat an effect.
func IsTransient(err error) bool {
	var rejected *RejectedError
	if errors.As(err, &rejected) {
		return transientCodes[rejected.Code]
	}
	code := Code(err)
	return code == codeNotSent || code == codeConnection
}

// RetrySafe reports whether resending the same call cannot repeat an effect: nothing ran, or it
// may have and the call is retry-safe (OutcomeUnknownError.RetrySafe).
func RetrySafe(err error) bool {
	var unknown *OutcomeUnknownError
	if errors.As(err, &unknown) {
		return unknown.RetrySafe
	}
	return NothingRan(err)
}

// TimedOut reports whether the client gave up waiting: an unknown outcome after a timeout, or a
// request or connect that timed out before anything was sent.
func TimedOut(err error) bool {
	var unknown *OutcomeUnknownError
	if errors.As(err, &unknown) {
		return unknown.TimedOut
	}
	code := Code(err)
	return (code == codeNotSent || code == codeConnection) && isTimeout(err)
}
