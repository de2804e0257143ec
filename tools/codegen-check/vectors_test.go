// The `replies` vectors through the generated Go decoders (copied beside the generated package
// by tools/codegen-check.sh). Expected field names are the header's (units appended); the struct
// fields are their PascalCase, a field named `outcome` as OutcomeValue (codegen/foreign.rs).
// Error replies ({"error"}) are the runtime's classification, not a decoder's: skipped, counted.
package scripts

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

type replyCase struct {
	ID     string         `json:"id"`
	Script string         `json:"script"`
	Raw    any            `json:"raw"`
	Status string         `json:"status"`
	Fields map[string]any `json:"fields"`
	Error  string         `json:"error"`
}

func rawValue(t *testing.T, v any) any {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			t.Fatalf("vector number %v", x)
		}
		return n
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rawValue(t, e)
		}
		return out
	case map[string]any:
		b, err := hex.DecodeString(x["hex"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return v
}

func pascalName(k string) string {
	if k == "outcome" {
		return "OutcomeValue"
	}
	parts := strings.Split(k, "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

// same compares a decoded Go value with a vector's expectation, saying where they differ.
func same(got reflect.Value, want any, path string) error {
	switch w := want.(type) {
	case json.Number:
		if got.Kind() == reflect.Uint64 && fmt.Sprint(got.Uint()) == w.String() ||
			got.Kind() == reflect.Int64 && fmt.Sprint(got.Int()) == w.String() {
			return nil
		}
	case bool:
		if got.Kind() == reflect.Bool && got.Bool() == w {
			return nil
		}
	case string:
		if got.Kind() == reflect.String && got.String() == w ||
			got.Kind() == reflect.Slice && got.Type().Elem().Kind() == reflect.Uint8 && string(got.Bytes()) == w {
			return nil
		}
	case map[string]any:
		if h, ok := w["hex"].(string); ok && len(w) == 1 {
			if got.Kind() == reflect.Slice && hex.EncodeToString(got.Bytes()) == h {
				return nil
			}
			break
		}
		if got.Kind() != reflect.Struct || got.NumField() != len(w) {
			break
		}
		for k, x := range w {
			f := got.FieldByName(pascalName(k))
			if !f.IsValid() {
				return fmt.Errorf("%s.%s: no such field", path, k)
			}
			if err := same(f, x, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		if got.Kind() != reflect.Slice || got.Len() != len(w) {
			break
		}
		for i, x := range w {
			if err := same(got.Index(i), x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: expected %v, got %#v", path, want, got.Interface())
}

func TestReplyVectors(t *testing.T) {
	f, err := os.Open(os.Getenv("REDIS_ATOMIC_VECTORS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.UseNumber()
	var file struct {
		Replies []replyCase `json:"replies"`
	}
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	ran, skipped := 0, 0
	for _, c := range file.Replies {
		if m, ok := c.Raw.(map[string]any); ok && m["error"] != nil {
			skipped++
			continue
		}
		ran++
		decode, ok := Decoders[c.Script]
		if !ok {
			t.Errorf("%s: no decoder for %s", c.ID, c.Script)
			continue
		}
		reply, err := decode(rawValue(t, c.Raw))
		if c.Error != "" {
			var bad *BadReplyError
			if !errors.As(err, &bad) || bad.Code() != c.Error {
				t.Errorf("%s: expected error %s, got reply %#v, error %v", c.ID, c.Error, reply, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: expected %s, got error %v", c.ID, c.Status, err)
			continue
		}
		if reply.Outcome() != c.Status {
			t.Errorf("%s: expected outcome %s, got %s", c.ID, c.Status, reply.Outcome())
			continue
		}
		if err := same(reflect.ValueOf(reply), c.Fields, c.ID); err != nil {
			t.Error(err)
		}
	}
	if ran == 0 {
		t.Fatal("no reply vectors ran")
	}
	t.Logf("%d reply vectors, %d error replies left to the runtime", ran, skipped)
}
