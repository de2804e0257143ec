package io.redisatomic;

import io.redisatomic.scripts.IdemBegin;
import io.redisatomic.scripts.IdemComplete;
import io.redisatomic.scripts.IdemExtend;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Idempotency keys: each request's side effect happens once, however often it is sent.
 *
 * <p>Invariant: at most one live claim per key; a claim's result, once stored, is what every later
 * duplicate gets, and no superseded executor can overwrite or extend it.
 *
 * <p>Keys ({@link #keys}): one string per key, {@code <ns>:idem:v1:{<digest>}}, the digest being
 * SHA-256 of the length-prefixed (scope, key), so user bytes never reach key names. It packs
 * state, fence, owner token, fingerprint, lease end and the stored response (encoded as
 * {@link Response} says, the same bytes in every face).
 *
 * <p>Retries: every script is retry-safe; {@link #begin} with a random token is resent inside the
 * library but its unknown outcome says {@code retrySafe() == false} (the caller never saw the
 * token); {@link #beginWithToken} and the ends by parts are safe to repeat.
 *
 * <p>Not guaranteed: the work between begin and complete is only as idempotent as it is fenced;
 * an executor paused past its lease may run the side effect beside the one that took over.
 */
public final class Idempotency {
    private static final int SCHEMA = 1;
    /** The longest scope and key, in bytes. */
    public static final int MAX_KEY_LEN = 512;
    private final RedisAtomic client;
    private final Keyspace keyspace;
    private final IdempotencyConfig config;

    Idempotency(RedisAtomic client, Keyspace keyspace, IdempotencyConfig config) {
        this.client = client;
        this.keyspace = keyspace;
        this.config = config;
    }

    /** With these settings. */
    public Idempotency withConfig(IdempotencyConfig c) {
        return new Idempotency(client, keyspace, c);
    }

    public IdempotencyConfig config() {
        return config;
    }

    /** The keys of one idempotency key. */
    public record IdempotencyKeys(String record) {
    }

    public IdempotencyKeys keys(String scope, byte[] key) {
        byte[] s = scope == null ? new byte[0] : scope.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        checkLen("scope", s);
        checkLen("idempotency key", key == null ? new byte[0] : key);
        return new IdempotencyKeys(keyspace.key("idem", SCHEMA, Fingerprint.of(s, key).hex()));
    }

    private static void checkLen(String what, byte[] v) {
        if (v.length == 0 || v.length > MAX_KEY_LEN) {
            throw new BadArgumentException(what + " must be 1.." + MAX_KEY_LEN + " bytes, got " + v.length);
        }
    }

    /** Begins {@code key} in {@code scope} for a request with fingerprint {@code fp}, with a fresh token. */
    public Begin begin(String scope, byte[] key, Fingerprint fp) {
        return RedisAtomic.join(beginAsync(scope, key, fp, null));
    }

    /** The same with the caller's token: after an unknown outcome, repeat it with the same token. */
    public Begin beginWithToken(String scope, byte[] key, Fingerprint fp, String token) {
        return RedisAtomic.join(beginAsync(scope, key, fp, token));
    }

    /** The asynchronous begin; {@code token} null for a fresh random one. */
    public CompletableFuture<Begin> beginAsync(String scope, byte[] key, Fingerprint fp, String token) {
        try {
            boolean callerToken = token != null;
            String t = Tokens.check(callerToken ? token : Tokens.random());
            IdempotencyKeys k = keys(scope, key);
            List<Object> args = List.of(t, fp.hex(), config.ttl().toMillis(), config.resultTtl().toMillis());
            long sent = System.nanoTime();
            return client.runAsync(IdemBegin.DEF, List.of(k.record()), args, true)
                    .thenApply(raw -> begun(IdemBegin.decode(raw), scope, key, t, sent))
                    .exceptionallyCompose(e -> CompletableFuture.failedFuture(Locks.callerSafety(e, callerToken)));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Begin begun(IdemBegin.Reply r, String scope, byte[] key, String token, long sent) {
        if (r instanceof IdemBegin.Reply.Claimed c) {
            return new Claim(this, scope, key, token, c.fence(), config.ttl(), sent, c.takeover());
        }
        if (r instanceof IdemBegin.Reply.InProgress p) {
            return new Begin.InProgress(Duration.ofMillis(p.retryAfterMs()));
        }
        if (r instanceof IdemBegin.Reply.Replay p) {
            Response response = Response.decode(p.payload());
            return new Begin.Replay(p.outcomeValue().equals("failed")
                    ? new Begin.Stored.Failed(response) : new Begin.Stored.Completed(response));
        }
        return new Begin.Mismatch();
    }

    /** Extends the claim (token, fence) on {@code key} to end {@code ttl} from the server's now. */
    public Extend extend(String scope, byte[] key, String token, long fence, Duration ttl) {
        return RedisAtomic.join(extendAsync(scope, key, token, fence, ttl));
    }

    public CompletableFuture<Extend> extendAsync(String scope, byte[] key, String token, long fence, Duration ttl) {
        try {
            List<Object> args = List.of(Tokens.check(token), Long.toUnsignedString(fence),
                    Durations.millis("ttl", ttl, IdempotencyConfig.MAX_TTL));
            return client.runAsync(IdemExtend.DEF, List.of(keys(scope, key).record()), args, true)
                    .thenApply(raw -> IdemExtend.decode(raw) instanceof IdemExtend.Reply.Extended e
                            ? new Extend.Extended(e.fence(), Duration.ofMillis(e.ttlMs()))
                            : new Lost());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Stores {@code response} for the claim (token, fence) by parts. */
    public End complete(String scope, byte[] key, String token, long fence, Response response) {
        return RedisAtomic.join(completeAsync(scope, key, token, fence, response));
    }

    public CompletableFuture<End> completeAsync(String scope, byte[] key, String token, long fence, Response response) {
        return finish(scope, key, token, fence, "completed", response);
    }

    /** Ends the claim (token, fence) as failed, by parts. */
    public End fail(String scope, byte[] key, String token, long fence, Failure failure) {
        return RedisAtomic.join(failAsync(scope, key, token, fence, failure));
    }

    public CompletableFuture<End> failAsync(String scope, byte[] key, String token, long fence, Failure failure) {
        return failure instanceof Failure.Final f
                ? finish(scope, key, token, fence, "failed", f.response())
                : finish(scope, key, token, fence, "retry", null);
    }

    private CompletableFuture<End> finish(String scope, byte[] key, String token, long fence, String word, Response r) {
        try {
            byte[] payload = r == null ? new byte[0] : r.encode();
            if (payload.length > config.maxResponseBytes()) {
                throw new BadArgumentException("response is " + payload.length + " bytes encoded, over the "
                        + config.maxResponseBytes() + "-byte limit: store a Body.Reference");
            }
            List<Object> args = List.of(Tokens.check(token), Long.toUnsignedString(fence), word, payload,
                    config.resultTtl().toMillis());
            return client.runAsync(IdemComplete.DEF, List.of(keys(scope, key).record()), args, true)
                    .thenApply(raw -> IdemComplete.decode(raw) instanceof IdemComplete.Reply.Stored
                            ? new End.Stored() : new Lost());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
