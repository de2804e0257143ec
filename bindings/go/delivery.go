package redisatomic

// Delivery: how a script reaches the server. When the Function library a script belongs to is
// deployed (`redis-atomic functions deploy`: FUNCTION LOAD of `redis_atomic_v<N>` on every
// primary), its calls are FCALL / FCALL_RO of the library's function; otherwise EVALSHA /
// EVALSHA_RO of its SHA1, with one SCRIPT LOAD and one resend after NOSCRIPT.
//
// Why: FCALL finds a named function of a loaded library (no script cache to miss after a
// restart or a failover, no NOSCRIPT round trip), and the library's version is its name, so a
// library that is there under this module's name is the code this module was generated from
// (deploy refuses different code under the same name).
//
// The library is looked for once per client and library, at the first call (FUNCTION LIST
// LIBRARYNAME, on every primary of a cluster: FCALL only if all have it). A probe that fails
// (a server without FUNCTION, an ACL refusal, a network error) means EVALSHA; a network error is
// asked again at the next call. Whatever was found, a call answered "Function not found" ran
// nothing: the client stops using FCALL for that library and resends the call as EVALSHA in the
// same attempt, so correctness never depends on the probe, only speed does.

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis-atomic/redis-atomic/bindings/go/internal/scripts"
	"github.com/redis/go-redis/v9"
)

// deliveries remembers, per library name, whether its functions are deployed.
type deliveries struct {
	mu       sync.Mutex
	deployed sync.Map // library name → bool
}

// invoke sends def's call: its head (FCALL function or EVALSHA sha1, `_RO` for a no-writes
// script), then tail (the key count, keys, arguments); after NOSCRIPT one SCRIPT LOAD and one
// resend; after a missing function, the same call as EVALSHA.
func (c *Client) invoke(ctx context.Context, def *scripts.ScriptDef, tail []any) (any, error) {
	if c.functions(ctx, def.Library) {
		raw, err := c.sendCall(ctx, def, true, tail)
		if !functionMissing(err) {
			return raw, err
		}
		c.delivery.deployed.Store(def.Library, false)
	}
	raw, err := c.sendCall(ctx, def, false, tail)
	var rejected *RejectedError
	if errors.As(err, &rejected) && rejected.Code == "NOSCRIPT" {
		if _, err := c.send(ctx, "script", "load", def.Body); err != nil {
			return nil, classify(ctx, err)
		}
		raw, err = c.sendCall(ctx, def, false, tail)
	}
	return raw, err
}

// sendCall sends one call of def by FCALL (fcall) or EVALSHA.
func (c *Client) sendCall(ctx context.Context, def *scripts.ScriptDef, fcall bool, tail []any) (any, error) {
	cmd := make([]any, 0, 2+len(tail))
	switch {
	case fcall && def.ReadOnly:
		cmd = append(cmd, "fcall_ro", def.FunctionName)
	case fcall:
		cmd = append(cmd, "fcall", def.FunctionName)
	case def.ReadOnly:
		cmd = append(cmd, "evalsha_ro", def.SHA1)
	default:
		cmd = append(cmd, "evalsha", def.SHA1)
	}
	raw, err := c.send(ctx, append(cmd, tail...)...)
	if err != nil {
		return nil, classify(ctx, err)
	}
	return raw, nil
}

// functions reports whether library's functions are deployed (looked for once, see above).
func (c *Client) functions(ctx context.Context, library string) bool {
	if library == "" {
		return false
	}
	if v, ok := c.delivery.deployed.Load(library); ok {
		return v.(bool)
	}
	c.delivery.mu.Lock()
	defer c.delivery.mu.Unlock()
	if v, ok := c.delivery.deployed.Load(library); ok {
		return v.(bool)
	}
	deployed, err := c.probeLibrary(ctx, library)
	if err == nil || isServerReply(err) {
		c.delivery.deployed.Store(library, deployed)
	}
	return deployed
}

// probeLibrary asks whether library is loaded (on every primary of a cluster).
func (c *Client) probeLibrary(ctx context.Context, library string) (bool, error) {
	has := func(ctx context.Context, r redis.Cmdable) (_ bool, err error) {
		defer guard(&err) // on a goroutine of its own in a cluster
		libs, err := r.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: library}).Result()
		if err != nil {
			return false, err
		}
		for _, l := range libs {
			if l.Name == library {
				return true, nil
			}
		}
		return false, nil
	}
	cluster, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		return has(ctx, c.rdb)
	}
	var mu sync.Mutex
	all := true
	err := cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		found, err := has(ctx, node)
		mu.Lock()
		all = all && found
		mu.Unlock()
		return err
	})
	return all && err == nil, err
}

// isServerReply: err is the server's answer (a refusal), not a failure to reach it.
func isServerReply(err error) bool {
	var server redis.Error
	return errors.As(err, &server) && !isClientSide(err)
}

// functionMissing: the server has no such function (nothing ran). Both Redis and Valkey answer
// it with the generic ERR code and this text: the one place a message, not a code, is read.
func functionMissing(err error) bool {
	var s *ServerError
	return errors.As(err, &s) && s.Code == "ERR" && strings.HasPrefix(s.Message, "Function not found")
}
