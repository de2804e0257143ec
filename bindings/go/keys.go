package redisatomic

import (
	"strings"
)

// Every key is `<namespace>:<primitive>:v<schema>:{<tag>}` + `:<part>` per part, as the
// library's Keyspace builds it: all keys of one call share the `{tag}`, so they hash to one
// cluster slot and one script may touch them together.

const maxName = 512

// checkNamespace: 1..=512 bytes without `{`, `}` or `:`.
func checkNamespace(ns string) error {
	if ns == "" || len(ns) > maxName || strings.ContainsAny(ns, "{}:") {
		return wrap(ErrBadArgument, nil, "namespace must be 1..=%d bytes without '{', '}' or ':', got %q", maxName, ns)
	}
	return nil
}

// checkTag: a tag or part is 1..=512 bytes without `{` or `}`.
func checkTag(what, s string) error {
	if s == "" || len(s) > maxName || strings.ContainsAny(s, "{}") {
		return wrap(ErrBadArgument, nil, "%s must be 1..=%d bytes without '{' or '}'", what, maxName)
	}
	return nil
}

// key builds one key of a primitive under namespace.
func key(namespace, primitive, schema, tag string, parts ...string) (string, error) {
	if err := checkTag("tag", tag); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(namespace + ":" + primitive + ":v" + schema + ":{" + tag + "}")
	for _, p := range parts {
		if err := checkTag("key part", p); err != nil {
			return "", err
		}
		b.WriteString(":" + p)
	}
	return b.String(), nil
}

// Slot is the cluster hash slot of key (the server's CLUSTER KEYSLOT): CRC16/XMODEM of the hash
// tag (the bytes between the first `{` and the next `}`, when non-empty; else the whole key)
// mod 16384.
func Slot(key string) uint16 {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

// sameSlot refuses keys of several slots before anything is sent (the error names slots, never
// keys: they may carry user data).
func sameSlot(keys []string) error {
	for _, k := range keys[min(1, len(keys)):] {
		if Slot(k) != Slot(keys[0]) {
			slots := make([]uint16, len(keys))
			for i, k := range keys {
				slots[i] = Slot(k)
			}
			return wrap(ErrCrossSlot, nil, "slots %v", slots)
		}
	}
	return nil
}
