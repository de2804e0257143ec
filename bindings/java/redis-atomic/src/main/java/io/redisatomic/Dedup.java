package io.redisatomic;

import io.lettuce.core.SetArgs;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * First-sighting detection: {@link #firstSeen} is true for exactly one caller per event id within
 * the TTL. One key per event, {@code <ns>:dedup:v1:{event_id}}, set by {@code SET NX PX GET} with
 * the caller's token, so a resend after a lost reply recognises its own sighting (retry-safe with
 * {@link #firstSeenAs}; with a random token the caller cannot resend it).
 *
 * <p>Not guaranteed: after a failover, a sighting acknowledged but not replicated is forgotten.
 */
public final class Dedup {
    private static final int SCHEMA = 1;
    /** The longest TTL: 30 days. */
    public static final Duration MAX_TTL = Duration.ofDays(30);
    private final RedisAtomic client;
    private final Keyspace keyspace;

    Dedup(RedisAtomic client, Keyspace keyspace) {
        this.client = client;
        this.keyspace = keyspace;
    }

    /** The key of one event. */
    public record DedupKeys(String seen) {
    }

    public DedupKeys keys(String eventId) {
        return new DedupKeys(keyspace.key("dedup", SCHEMA, eventId));
    }

    /** Whether this is the first sighting of {@code eventId} within {@code ttl}. */
    public boolean firstSeen(String eventId, Duration ttl) {
        return RedisAtomic.join(firstSeenAsync(eventId, ttl, null));
    }

    /** The same with the caller's token: a resend with it answers first again if its sighting was first. */
    public boolean firstSeenAs(String eventId, Duration ttl, String token) {
        return RedisAtomic.join(firstSeenAsync(eventId, ttl, token));
    }

    public CompletableFuture<Boolean> firstSeenAsync(String eventId, Duration ttl, String token) {
        try {
            boolean callerToken = token != null;
            byte[] t = Tokens.check(callerToken ? token : Tokens.random()).getBytes(StandardCharsets.UTF_8);
            long ttlMs = Durations.millis("ttl", ttl, MAX_TTL);
            byte[] key = keys(eventId).seen().getBytes(StandardCharsets.UTF_8);
            return client.<byte[]>commandAsync(c -> c.setGet(key, t, SetArgs.Builder.nx().px(ttlMs)), true)
                    .thenApply(prev -> prev == null || Arrays.equals(prev, t))
                    .exceptionallyCompose(e -> CompletableFuture.failedFuture(Locks.callerSafety(e, callerToken)));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@link #firstSeen} for up to 1000 ids under one token, sent together (each id its own slot):
     * not atomic across ids; an id repeated in the batch is true at most once. An unknown outcome
     * of any id fails the batch (not retry-safe: the token is random).
     */
    public List<Boolean> firstSeenMany(List<String> eventIds, Duration ttl) {
        return RedisAtomic.join(firstSeenManyAsync(eventIds, ttl));
    }

    public CompletableFuture<List<Boolean>> firstSeenManyAsync(List<String> eventIds, Duration ttl) {
        try {
            if (eventIds.size() > 1000) {
                throw new BadArgumentException("a batch takes at most 1000 ids, got " + eventIds.size());
            }
            Durations.millis("ttl", ttl, MAX_TTL);
            String token = Tokens.random();
            List<CompletableFuture<Boolean>> sent = eventIds.stream().map(id -> firstSeenAsync(id, ttl, token)
                    .exceptionallyCompose(e -> CompletableFuture.failedFuture(Locks.callerSafety(e, false)))).toList();
            return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).thenApply(done -> {
                Set<String> answered = new HashSet<>();
                List<Boolean> out = new ArrayList<>();
                for (int i = 0; i < eventIds.size(); i++) {
                    out.add(sent.get(i).join() && answered.add(eventIds.get(i)));
                }
                return out;
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
