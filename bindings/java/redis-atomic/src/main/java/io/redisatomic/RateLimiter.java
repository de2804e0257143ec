package io.redisatomic;

import io.redisatomic.scripts.RlAnchoredWindow;
import io.redisatomic.scripts.RlFixedWindow;
import io.redisatomic.scripts.RlGcra;
import io.redisatomic.scripts.RlPolicy;
import io.redisatomic.scripts.RlSlidingLog;
import io.redisatomic.scripts.RlSlidingWindow;
import io.redisatomic.scripts.RlTokenBucket;
import io.redisatomic.scripts.ScriptDef;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A rate limiter: one {@link Policy} applied per identity, on the server's clock, all or nothing
 * (a request refused by any limit charges none).
 *
 * <p>Keys ({@link #keys}): {@code <ns>:rl:v1:{digest(identity)}:<limit name>:<code>} per limit;
 * with a request id, {@code <ns>:rl:v1:{digest(identity)}:req:<scope>:digest(request_id)} records
 * the decision. One limit without a request id runs its algorithm's own script; several limits,
 * or a request id, run {@code rl_policy}.
 *
 * <p>Retries: a consume without a request id is not retry-safe (a resend charges twice), so an
 * unknown outcome is never resent and says {@code retrySafe() == false}; with a request id a
 * resend replays the recorded decision, so it is resent and safe.
 */
public final class RateLimiter {
    private static final int SCHEMA = 1;
    /** The longest identity, in bytes. */
    public static final int MAX_KEY_LEN = 1024;
    /** The longest request id, in bytes. */
    public static final int MAX_REQUEST_ID_LEN = 256;
    /** The longest a request's decision is remembered. */
    public static final Duration MAX_REQUEST_TTL = Duration.ofHours(24);
    private final RedisAtomic client;
    private final Keyspace keyspace;
    private final Policy policy;
    private final String scope;
    private final Duration requestTtl;

    RateLimiter(RedisAtomic client, Keyspace keyspace, Policy policy) {
        this(client, keyspace, policy, min(policy.longestPeriod(), MAX_REQUEST_TTL));
    }

    private RateLimiter(RedisAtomic client, Keyspace keyspace, Policy policy, Duration requestTtl) {
        this.client = client;
        this.keyspace = keyspace;
        this.policy = policy;
        this.requestTtl = requestTtl;
        this.scope = Keyspace.sha256Hex16(String.join("|", policy.limits().stream()
                .map(l -> l.name() + ":" + l.algorithm().code()).toList()).getBytes(StandardCharsets.UTF_8));
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** With this request-record TTL (1 ms..=24 h; default: the longest period, at most 24 h). */
    public RateLimiter withRequestTtl(Duration ttl) {
        Durations.millis("request ttl", ttl, MAX_REQUEST_TTL);
        return new RateLimiter(client, keyspace, policy, ttl);
    }

    public Policy policy() {
        return policy;
    }

    /** The keys of one identity: the request record (null without an id) and one state key per limit. */
    public record RateLimitKeys(String request, List<String> limits) {
    }

    public RateLimitKeys keys(String identity, String requestId) {
        String tag = Keyspace.digest(identity, MAX_KEY_LEN, "rate-limit key");
        List<String> limits = policy.limits().stream()
                .map(l -> keyspace.key("rl", SCHEMA, tag, l.name(), l.algorithm().code())).toList();
        String request = requestId == null ? null
                : keyspace.key("rl", SCHEMA, tag, "req", scope, Keyspace.digest(requestId, MAX_REQUEST_ID_LEN, "request id"));
        return new RateLimitKeys(request, limits);
    }

    /** Consumes {@code cost} units for {@code identity}: allowed (charged to every limit) or limited (nothing charged). */
    public Decision consume(String identity, long cost) {
        return RedisAtomic.join(consumeAsync(identity, cost, null));
    }

    /** The same, recorded under {@code requestId}: a resend replays the decision without charging again. */
    public Decision consumeWithId(String identity, long cost, String requestId) {
        return RedisAtomic.join(consumeAsync(identity, cost, requestId));
    }

    /** The asynchronous consume; {@code requestId} may be null. */
    public CompletableFuture<Decision> consumeAsync(String identity, long cost, String requestId) {
        try {
            policy.checkCost(cost);
            RateLimitKeys k = keys(identity, requestId);
            if (requestId == null && policy.limits().size() == 1) {
                return single(k.limits().get(0), cost);
            }
            return multi(k, cost, requestId);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<Decision> single(String key, long cost) {
        Limit l = policy.limits().get(0);
        Algorithm a = l.algorithm();
        List<Object> args = a == Algorithm.ANCHORED_WINDOW
                ? List.of(cost, l.limit(), l.periodMs())
                : List.of(cost, l.limit(), l.periodUs(), l.burst(), "");
        return client.runAsync(script(a), List.of(key), args, false).thenApply(raw -> Replies.single(a, raw));
    }

    private static ScriptDef script(Algorithm a) {
        return switch (a) {
            case FIXED_WINDOW -> RlFixedWindow.DEF;
            case ANCHORED_WINDOW -> RlAnchoredWindow.DEF;
            case SLIDING_LOG -> RlSlidingLog.DEF;
            case SLIDING_WINDOW -> RlSlidingWindow.DEF;
            case TOKEN_BUCKET -> RlTokenBucket.DEF;
            case GCRA -> RlGcra.DEF;
        };
    }

    private CompletableFuture<Decision> multi(RateLimitKeys k, long cost, String requestId) {
        List<String> keys = new ArrayList<>();
        String first = k.request() != null ? k.request() : k.limits().get(0).replaceFirst(
                "\\}:[^{}]*$", "}:req:-");
        keys.add(first);
        keys.addAll(k.limits());
        List<Object> args = new ArrayList<>(List.of(cost, requestId == null ? ""
                : first.substring(first.lastIndexOf(':') + 1), Durations.micros(requestTtl), ""));
        for (Limit l : policy.limits()) {
            args.addAll(List.of(l.algorithm().code(), l.limit(), l.periodUs(), l.burst()));
        }
        int n = policy.limits().size();
        return client.runAsync(RlPolicy.DEF, keys, args, requestId != null).thenApply(raw -> Replies.policy(raw, n));
    }
}
