package redisatomic

import (
	"context"
	"crypto/sha1"
	"encoding/hex"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
)

// Script is one script of your own folder, as `redis-atomic scripts bindings --lang go DIR`
// generates its definition: run it with Client.RunScript under this module's retry rule.
type Script struct {
	// Name is the script's name (for errors).
	Name string
	// Body is its source; SHA1 its digest (computed from Body when empty).
	Body, SHA1 string
	// ReadOnly: sent as EVALSHA_RO.
	ReadOnly bool
	// RetrySafe: resent after an unknown outcome (its header says `retry: safe`).
	RetrySafe bool
}

// RunScript runs a script of your own (EVALSHA, loading it on NOSCRIPT) and returns its raw
// reply for the generated decoder; the generated layer's Runner is a two-line adapter:
//
//	type runner struct{ c *redisatomic.Client }
//
//	func (r runner) Run(ctx context.Context, d *myscripts.ScriptDef, keys []string, args []any) (any, error) {
//		return r.c.RunScript(ctx, redisatomic.Script{Name: d.Name, Body: d.Body, SHA1: d.SHA1,
//			ReadOnly: d.ReadOnly, RetrySafe: d.RetrySafe}, keys, args)
//	}
func (c *Client) RunScript(ctx context.Context, s Script, keys []string, args []any) (any, error) {
	if s.Body == "" {
		return nil, wrap(ErrBadArgument, nil, "script %q has no body", s.Name)
	}
	if s.SHA1 == "" {
		sum := sha1.Sum([]byte(s.Body))
		s.SHA1 = hex.EncodeToString(sum[:])
	}
	return c.Run(ctx, &scripts.ScriptDef{Name: s.Name, Body: s.Body, SHA1: s.SHA1, ReadOnly: s.ReadOnly,
		RetrySafe: s.RetrySafe, Keys: []string{"key..."}, Args: []string{"arg..."}}, keys, args)
}
