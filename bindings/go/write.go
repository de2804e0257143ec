package redisatomic

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// Write is one typed mutation that FencedWrites (and optimistic CAS) apply: SET (optionally with
// PX), HSET, HDEL, SADD, SREM, DEL, PEXPIRE. A closed set: every one is idempotent (a batch
// applied twice leaves what applying it once leaves, so a lost reply may be resent), names its
// key (so a batch is checked to stay in one hash slot before sending), and is what the
// fenced_write script implements. Counters are deliberately absent: read (CAS) and write the
// result.
type Write struct {
	op   string
	key  string
	args [][]byte
	ttl  time.Duration // SET PX / PEXPIRE
}

// Bounds of a batch of writes.
const (
	MaxWrites   = 64
	maxItems    = 256
	maxWriteTTL = 30 * 24 * time.Hour
)

// WriteSet is SET key value.
func WriteSet(key string, value []byte) Write {
	return Write{op: "set", key: key, args: [][]byte{value}}
}

// WriteSetPX is SET key value PX ttl (1 ms..=30 days).
func WriteSetPX(key string, value []byte, ttl time.Duration) Write {
	return Write{op: "set", key: key, args: [][]byte{value}, ttl: ttl}
}

// WriteHSet is HSET key field value ... (fields in name order).
func WriteHSet(key string, fields map[string][]byte) Write {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	w := Write{op: "hset", key: key}
	for _, n := range names {
		w.args = append(w.args, []byte(n), fields[n])
	}
	return w
}

// WriteHDel is HDEL key field ...
func WriteHDel(key string, fields ...string) Write {
	w := Write{op: "hdel", key: key}
	for _, f := range fields {
		w.args = append(w.args, []byte(f))
	}
	return w
}

// WriteSAdd is SADD key member ...
func WriteSAdd(key string, members ...[]byte) Write {
	return Write{op: "sadd", key: key, args: members}
}

// WriteSRem is SREM key member ...
func WriteSRem(key string, members ...[]byte) Write {
	return Write{op: "srem", key: key, args: members}
}

// WriteDel is DEL key.
func WriteDel(key string) Write { return Write{op: "del", key: key} }

// WriteExpire is PEXPIRE key ttl (1 ms..=30 days).
func WriteExpire(key string, ttl time.Duration) Write {
	return Write{op: "pexpire", key: key, ttl: ttl}
}

// Key is the key the write changes.
func (w Write) Key() string { return w.key }

// items counts a write's fields or members (1 for the rest).
func (w Write) items() int {
	switch w.op {
	case "hset":
		return len(w.args) / 2
	case "hdel", "sadd", "srem":
		return len(w.args)
	}
	return 1
}

// command is the write's arguments after its key (validated).
func (w Write) command() ([][]byte, error) {
	if w.key == "" || w.op == "" {
		return nil, wrap(ErrBadArgument, nil, "write key must not be empty")
	}
	if n := w.items(); n == 0 || n > maxItems {
		return nil, wrap(ErrBadArgument, nil, "a write takes 1..=%d fields or members, got %d", maxItems, n)
	}
	args := w.args
	if w.op == "pexpire" || (w.op == "set" && w.ttl != 0) {
		n, err := millis("write ttl", w.ttl, maxWriteTTL)
		if err != nil {
			return nil, err
		}
		px := []byte(strconv.FormatInt(n, 10))
		if w.op == "set" {
			args = [][]byte{w.args[0], []byte("PX"), px}
		} else {
			args = [][]byte{px}
		}
	}
	return args, nil
}

// checkBatch validates a batch: 1..=64 writes, each well-formed, all keys in one slot.
func checkBatch(writes []Write) error {
	if len(writes) == 0 || len(writes) > MaxWrites {
		return wrap(ErrBadArgument, nil, "a batch takes 1..=%d writes, got %d", MaxWrites, len(writes))
	}
	keys := make([]string, len(writes))
	for i, w := range writes {
		if _, err := w.command(); err != nil {
			return err
		}
		keys[i] = w.key
	}
	return sameSlot(keys)
}

// hashTag is the part of key that decides its slot: between the first '{' and the next '}'
// when non-empty, else the whole key.
func hashTag(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			return key[open+1 : open+1+end]
		}
	}
	return key
}
