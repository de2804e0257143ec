package redisatomic

import (
	"crypto/rand"
	"encoding/hex"
	"time"
	"unicode"
	"unicode/utf8"
)

// Fence is a lease's fencing token: strictly increasing per resource (max(last + 1, the server's
// TIME in µs)). Pass it to every write the lease protects and have the downstream refuse smaller
// ones.
type Fence uint64

// maxTTL is the longest lease accepted: 7 days.
const maxTTL = 7 * 24 * time.Hour

// maxTokenLen is the longest owner token accepted, in bytes.
const maxTokenLen = 256

// randomToken is a fresh owner token: 128 random bits in hex.
func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b[:])
}

// checkToken: 1..=256 bytes of UTF-8 without control characters (records separate fields with
// newlines).
func checkToken(token string) error {
	if token == "" || len(token) > maxTokenLen {
		return wrap(ErrBadArgument, nil, "owner token must be 1..=%d bytes, got %d", maxTokenLen, len(token))
	}
	if !utf8.ValidString(token) {
		return wrap(ErrBadArgument, nil, "owner token must be UTF-8")
	}
	for _, r := range token {
		if unicode.IsControl(r) {
			return wrap(ErrBadArgument, nil, "owner token must not contain control characters")
		}
	}
	return nil
}

// millis is d in whole milliseconds, refused outside 1 ms..=max.
func millis(what string, d, max time.Duration) (int64, error) {
	ms := d.Milliseconds()
	if ms < 1 || d > max {
		return 0, wrap(ErrBadArgument, nil, "%s must be between 1 ms and %d ms, got %v", what, max.Milliseconds(), d)
	}
	return ms, nil
}

// Extended: the lease now ends TTL from the server's now; its fence is unchanged.
type Extended struct {
	Fence Fence
	TTL   time.Duration
}

// Released: the lease was held by this token and fence and is now free.
type Released struct {
	Fence Fence
}

// Lost: this token and fence no longer hold the lease (expired, taken over, or already
// released: a resent release after a lost reply answers this too). Nothing changed.
type Lost struct{}

// ExtendResult is what an extend answers: Extended or Lost.
type ExtendResult interface {
	Outcome() string
	isExtend()
}

// ReleaseResult is what a release answers: Released or Lost.
type ReleaseResult interface {
	Outcome() string
	isRelease()
}

// Outcome is "extended".
func (Extended) Outcome() string { return "extended" }

// Outcome is "released".
func (Released) Outcome() string { return "released" }

// Outcome is "lost".
func (Lost) Outcome() string { return "lost" }

func (Extended) isExtend()  {}
func (Lost) isExtend()      {}
func (Released) isRelease() {}
func (Lost) isRelease()     {}
