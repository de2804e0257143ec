package redisatomic

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"testing"
)

var errNoSuchCall = errors.New("no such call")

// primitiveKeys computes a keys vector's keys through the primitive's own Keys, as a map of
// the vector's field names (snake_case) to keys (a string, a []any of strings, or nil).
func primitiveKeys(call string, in map[string]any) (map[string]any, error) {
	c, ns := New(nil), str(in["namespace"])
	switch call {
	case "keyspace.key":
		parts := []string{}
		for _, p := range in["parts"].([]any) {
			parts = append(parts, p.(string))
		}
		if err := checkNamespace(ns); err != nil {
			return nil, err
		}
		k, err := key(ns, in["primitive"].(string), "1", str(in["tag"]), parts...)
		return map[string]any{"key": k}, err
	case "semaphore.keys":
		s, err := NewSemaphore(c, ns, str(in["name"]), 1)
		if err != nil {
			return nil, err
		}
		return fields(s.Keys()), nil
	case "idempotency.keys":
		i, _ := NewIdempotency(c, ns)
		k, err := i.Keys(str(in["scope"]), bytesOf(in["key"]))
		return fields(k), err
	case "ratelimit.keys":
		return rateLimitKeys(c, ns, in)
	case "entries.keys":
		return entriesKeys(c, ns, in)
	case "quota.keys":
		q, _ := NewQuotas(c, ns)
		k, err := q.Keys(str(in["name"]), optional(in["request_id"])...)
		m := fields(k)
		if m["request"] == "" {
			m["request"] = nil
		}
		return m, err
	case "dedup.keys":
		d, _ := NewDedup(c, ns)
		k, err := d.Keys(str(in["event_id"]))
		return fields(k), err
	case "queue.keys":
		q, err := NewQueue(c, ns, str(in["name"]), DefaultQueueConfig())
		if err != nil {
			return nil, err
		}
		m := fields(q.Keys())
		m["claim"], err = q.Keys().ClaimKey(str(in["claim_id"]))
		return m, err
	case "fenced.keys", "fenced.key":
		f, _ := NewFencedWrites(c, ns)
		if call == "fenced.key" {
			k, err := f.Key(str(in["resource"]), str(in["part"]))
			return map[string]any{"key": k}, err
		}
		k, err := f.Keys(str(in["resource"]))
		return fields(k), err
	}
	return nil, errNoSuchCall
}

func entriesKeys(c *Client, ns string, in map[string]any) (map[string]any, error) {
	var entries []Entry
	for _, raw := range in["entries"].([]any) {
		e := raw.(map[string]any)
		l, err := vectorLimit(e["limit"].(map[string]any))
		if err != nil {
			return nil, err
		}
		entries = append(entries, Entry{Limit: l, Identity: str(e["identity"]), Hits: uint64(e["hits"].(float64))})
	}
	el, err := NewEntryLimiter(c, ns)
	if err != nil {
		return nil, err
	}
	keys, err := el.Keys(str(in["tag"]), entries)
	return map[string]any{"limits": toAny(keys)}, err
}

// vectorLimit is a vector's limit ({algorithm, limit, period_ms, name?}).
func vectorLimit(l map[string]any) (Limit, error) {
	alg, err := ParseAlgorithm(l["algorithm"].(string))
	if err != nil {
		return Limit{}, err
	}
	lim, err := NewLimit(alg, uint64(l["limit"].(float64)), time.Duration(l["period_ms"].(float64))*time.Millisecond)
	if name, ok := l["name"].(string); ok && err == nil {
		lim, err = lim.Named(name)
	}
	if burst, ok := l["burst"].(float64); ok && err == nil {
		lim, err = lim.WithBurst(uint64(burst))
	}
	return lim, err
}

func rateLimitKeys(c *Client, ns string, in map[string]any) (map[string]any, error) {
	var limits []Limit
	for _, raw := range in["limits"].([]any) {
		lim, err := vectorLimit(raw.(map[string]any))
		if err != nil {
			return nil, err
		}
		limits = append(limits, lim)
	}
	p, err := NewPolicy(limits...)
	if err != nil {
		return nil, err
	}
	rl, err := NewRateLimiter(c, ns, p)
	if err != nil {
		return nil, err
	}
	k, err := rl.Keys(str(in["identity"]), optional(in["request_id"])...)
	m := map[string]any{"request": nil, "limits": toAny(k.Limits)}
	if k.Request != "" {
		m["request"] = k.Request
	}
	return m, err
}

// checkKeys compares computed keys with a vector's (or its error code with the vector's).
func checkKeys(t *testing.T, id string, c map[string]any, got map[string]any, err error) {
	t.Helper()
	if want, ok := c["error"]; ok {
		if Code(err) != want {
			t.Errorf("%s: error %v (code %q), want %v", id, err, Code(err), want)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", id, err)
		return
	}
	want := map[string]any{}
	if k, ok := c["key"]; ok {
		want["key"] = k
	} else {
		want = c["keys"].(map[string]any)
	}
	for name, w := range want {
		if !reflect.DeepEqual(got[name], w) {
			t.Errorf("%s: %s = %#v, want %#v", id, name, got[name], w)
		}
	}
}

// fields is a keys struct as a map of snake_case names (Inflight → inflight, Seen → seen).
func fields(v any) map[string]any {
	var m map[string]any
	b, _ := json.Marshal(v)
	_ = json.Unmarshal(b, &m)
	out := map[string]any{}
	for k, val := range m {
		out[strings.ToLower(k)] = val
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func optional(v any) []string {
	if s, ok := v.(string); ok {
		return []string{s}
	}
	return nil
}

func bytesOf(v any) []byte {
	if m, ok := v.(map[string]any); ok {
		b, _ := hex.DecodeString(m["hex"].(string))
		return b
	}
	return []byte(str(v))
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
