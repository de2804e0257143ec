package redisatomichttp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
)

// IdempotencyConfig are Idempotency's settings; the zero value is the defaults.
type IdempotencyConfig struct {
	// Methods handled (others pass through); POST and PATCH when empty.
	Methods []string
	// Optional lets a request without the header pass through unprotected (else 400).
	Optional bool
	// MaxKeyLen is the longest key, in bytes (255 when 0).
	MaxKeyLen int
	// MaxBodyBytes bounds a request body (413 above) and a stored response body (1 MiB when 0).
	MaxBodyBytes int
	// ReplayHeaders are the response headers stored and replayed (Content-Type, Location and
	// Content-Location when nil).
	ReplayHeaders []string
	// Scope picks the scope (tenant, principal) a key belongs to; one shared scope when nil.
	Scope func(*http.Request) string
	// Cache decides from the status whether a response is stored for replay; the rest free the
	// key so a retry runs again. Everything but 5xx when nil.
	Cache func(status int) bool
	// GenerationHeader, when set, carries the claim's fence to the handler in that request
	// header (replacing any value the client sent), so it can fence its own writes.
	GenerationHeader string
}

func (c IdempotencyConfig) withDefaults() IdempotencyConfig {
	if len(c.Methods) == 0 {
		c.Methods = []string{http.MethodPost, http.MethodPatch}
	}
	c.MaxKeyLen = cmp(c.MaxKeyLen, 255)
	c.MaxBodyBytes = cmp(c.MaxBodyBytes, 1<<20)
	if c.ReplayHeaders == nil {
		c.ReplayHeaders = []string{"Content-Type", "Location", "Content-Location"}
	}
	if c.Scope == nil {
		c.Scope = func(*http.Request) string { return "default" }
	}
	if c.Cache == nil {
		c.Cache = func(status int) bool { return status < 500 }
	}
	return c
}

// Idempotency gives the wrapped handler the IETF Idempotency-Key semantics: a request runs once
// per (scope, key); a duplicate gets the stored response with `Idempotent-Replayed: true`, 409 +
// Retry-After while the first still runs, 422 when its request (method, path and query, body)
// differs. While the handler runs, a watchdog extends the claim. The handler runs on a context
// that a client hanging up does not cancel, so its outcome is stored (or the key freed) and a
// retry sees it. If Redis cannot be reached the request is refused with 503 and never runs
// (running it without the claim could run it twice). A response over MaxBodyBytes is answered,
// and stored, as a final 500: it ran, so a duplicate must not run it again.
func Idempotency(store *redisatomic.Idempotency, cfg IdempotencyConfig) func(http.Handler) http.Handler {
	cfg = cfg.withDefaults()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !slices.Contains(cfg.Methods, r.Method) {
				next.ServeHTTP(w, r)
				return
			}
			key, present, ok := idempotencyKey(r, cfg.MaxKeyLen)
			switch {
			case !present && cfg.Optional:
				next.ServeHTTP(w, r)
				return
			case !present:
				problem(w, http.StatusBadRequest, "Idempotency-Key header is required for this request")
				return
			case !ok:
				problem(w, http.StatusBadRequest, "Idempotency-Key must be 1..=255 visible ASCII characters")
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, int64(cfg.MaxBodyBytes)+1))
			if err != nil || len(body) > cfg.MaxBodyBytes {
				problem(w, http.StatusRequestEntityTooLarge, "request body over the limit")
				return
			}
			fp := redisatomic.FingerprintOf([]byte(r.Method), []byte(r.URL.RequestURI()), body)
			res, err := store.Begin(r.Context(), cfg.Scope(r), []byte(key), fp)
			if err != nil {
				slog.Warn("idempotency store unavailable; request refused", "error", err)
				problem(w, http.StatusServiceUnavailable, "idempotency store unavailable; retry later")
				return
			}
			switch b := res.(type) {
			case *redisatomic.Claim:
				r.Body = io.NopCloser(bytes.NewReader(body))
				execute(w, r, next, b, cfg)
			case redisatomic.InProgress:
				retryAfter(w, b.RetryAfter)
				problem(w, http.StatusConflict, "a request with this Idempotency-Key is still being processed")
			case redisatomic.Replay:
				replay(w, b.Response)
			case redisatomic.Mismatch:
				problem(w, http.StatusUnprocessableEntity, "Idempotency-Key was already used with a different request")
			default:
				problem(w, http.StatusInternalServerError, "unexpected idempotency state")
			}
		})
	}
}

// idempotencyKey reads the header: (key, present, well-formed: 1..=max visible ASCII or space).
func idempotencyKey(r *http.Request, maxLen int) (string, bool, bool) {
	values := r.Header.Values("Idempotency-Key")
	if len(values) == 0 {
		return "", false, false
	}
	k := trimSpace(values[0])
	ok := k != "" && len(k) <= maxLen
	for i := 0; ok && i < len(k); i++ {
		ok = k[i] >= 0x20 && k[i] < 0x7f
	}
	return k, true, ok
}

func trimSpace(s string) string { return string(bytes.TrimSpace([]byte(s))) }

// execute runs the handler under the claim (watched), then stores or frees it.
func execute(w http.ResponseWriter, r *http.Request, next http.Handler, claim *redisatomic.Claim, cfg IdempotencyConfig) {
	ctx := context.WithoutCancel(r.Context())
	r = r.WithContext(ctx)
	if cfg.GenerationHeader != "" {
		r.Header.Set(cfg.GenerationHeader, strconv.FormatUint(uint64(claim.Fence()), 10))
	}
	rec := &recorder{header: http.Header{}, limit: cfg.MaxBodyBytes}
	if watched, err := claim.Watch(); err == nil {
		func() {
			defer watched.Stop() // stopped before the claim ends, even if the handler panics
			next.ServeHTTP(rec, r)
		}()
	} else {
		next.ServeHTTP(rec, r)
	}
	status := rec.statusCode()
	switch {
	case !cfg.Cache(status):
		end(claim.Fail(ctx, nil))
		rec.writeTo(w)
	case rec.over:
		tooLarge(ctx, w, claim)
	default:
		stored := redisatomic.Response{Status: uint16(status), Body: rec.body.Bytes()}
		for _, name := range cfg.ReplayHeaders {
			for _, v := range rec.header.Values(name) {
				stored.Headers = append(stored.Headers, redisatomic.Header{Name: http.CanonicalHeaderKey(name), Value: []byte(v)})
			}
		}
		end(claim.Complete(ctx, stored))
		rec.writeTo(w)
	}
}

func end(res redisatomic.EndResult, err error) {
	if _, ok := res.(redisatomic.Stored); !ok || err != nil {
		slog.Warn("idempotency result not stored", "outcome", res, "error", err)
	}
}

// tooLarge: the request ran but its response is over the limit: a final 500, stored, so a
// duplicate replays the refusal instead of running the request again.
func tooLarge(ctx context.Context, w http.ResponseWriter, claim *redisatomic.Claim) {
	rec := &recorder{header: http.Header{}, limit: 1 << 16}
	problem(rec, http.StatusInternalServerError, "the response was over the size limit: the request ran, its response is not kept")
	final := redisatomic.Response{Status: http.StatusInternalServerError, Body: rec.body.Bytes(),
		Headers: []redisatomic.Header{{Name: "Content-Type", Value: []byte("application/problem+json")}}}
	end(claim.Fail(ctx, &final))
	rec.writeTo(w)
}

func replay(w http.ResponseWriter, stored redisatomic.Response) {
	for _, h := range stored.Headers {
		w.Header().Add(h.Name, string(h.Value))
	}
	w.Header().Set("Idempotent-Replayed", "true")
	status := int(stored.Status)
	if status < 100 || status > 999 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(stored.Body)
}

// recorder buffers a handler's response; over notes a body beyond limit (not stored).
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	limit  int
	over   bool
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

func (rec *recorder) Write(b []byte) (int, error) {
	rec.WriteHeader(http.StatusOK)
	rec.over = rec.over || rec.body.Len()+len(b) > rec.limit
	return rec.body.Write(b)
}

func (rec *recorder) statusCode() int { return cmp(rec.status, http.StatusOK) }

func (rec *recorder) writeTo(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.statusCode())
	_, _ = w.Write(rec.body.Bytes())
}
