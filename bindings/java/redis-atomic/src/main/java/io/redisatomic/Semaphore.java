package io.redisatomic;

import io.redisatomic.scripts.SemAcquire;
import io.redisatomic.scripts.SemExtend;
import io.redisatomic.scripts.SemInspect;
import io.redisatomic.scripts.SemRelease;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A counting semaphore with leases: at most {@code capacity} live permits at any instant of the
 * server's clock; each permit gets a fence greater than every one issued before.
 *
 * <p>Keys ({@link #keys}): {@code <ns>:sem:v1:{name}} (the permits, a sorted set by lease end),
 * {@code ...:holders} (token → fence) and {@code ...:fence} (the last fence). Every script is
 * retry-safe; an acquire with a random token says {@code retrySafe() == false} after an unknown
 * outcome, as a lock's does. Every caller of one semaphore must pass the same capacity.
 */
public final class Semaphore {
    private static final int SCHEMA = 1;
    /** The largest capacity. */
    public static final int MAX_CAPACITY = 100_000;
    private final RedisAtomic client;
    private final String name;
    private final int capacity;
    private final SemaphoreKeys keys;

    Semaphore(RedisAtomic client, Keyspace keyspace, String name, int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new BadArgumentException("capacity must be in 1.." + MAX_CAPACITY + ", got " + capacity);
        }
        this.client = client;
        this.name = name;
        this.capacity = capacity;
        String permits = keyspace.key("sem", SCHEMA, name);
        this.keys = new SemaphoreKeys(permits, permits + ":holders", permits + ":fence");
    }

    /** The keys of one semaphore. */
    public record SemaphoreKeys(String permits, String holders, String fence) {
    }

    /** The live permits, when the next one ends, and the last fence issued. */
    public record SemaphoreState(long live, Duration nextExpiry, long lastFence) {
    }

    public SemaphoreKeys keys() {
        return keys;
    }

    public String name() {
        return name;
    }

    public int capacity() {
        return capacity;
    }

    /** Takes a permit for {@code ttl} with a fresh random token. */
    public SemaphoreAcquire acquire(Duration ttl) {
        return RedisAtomic.join(acquireAsync(ttl, null));
    }

    /** Takes a permit with the caller's token: after an unknown outcome, resending is safe. */
    public SemaphoreAcquire acquireWithToken(String token, Duration ttl) {
        return RedisAtomic.join(acquireAsync(ttl, token));
    }

    public CompletableFuture<SemaphoreAcquire> acquireAsync(Duration ttl, String token) {
        try {
            boolean callerToken = token != null;
            String t = Tokens.check(callerToken ? token : Tokens.random());
            long ttlMs = Durations.millis("ttl", ttl, Durations.MAX_TTL);
            long sent = System.nanoTime();
            return client.runAsync(SemAcquire.DEF, List.of(keys.permits(), keys.holders(), keys.fence()),
                    List.of(t, (long) capacity, ttlMs), true)
                    .thenApply(SemAcquire::decode)
                    .thenApply(r -> r instanceof SemAcquire.Reply.Acquired a
                            ? (SemaphoreAcquire) new Permit(this, t, a.fence(), ttl, sent)
                            : new Full(Duration.ofMillis(((SemAcquire.Reply.Full) r).retryAfterMs())))
                    .exceptionallyCompose(e -> CompletableFuture.failedFuture(Locks.callerSafety(e, callerToken)));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public Extend extend(String token, long fence, Duration ttl) {
        return RedisAtomic.join(extendAsync(token, fence, ttl));
    }

    CompletableFuture<Extend> extendAsync(String token, long fence, Duration ttl) {
        try {
            List<Object> args = List.of(Tokens.check(token), Long.toUnsignedString(fence),
                    Durations.millis("ttl", ttl, Durations.MAX_TTL));
            return client.runAsync(SemExtend.DEF, List.of(keys.permits(), keys.holders()), args, true)
                    .thenApply(raw -> SemExtend.decode(raw) instanceof SemExtend.Reply.Extended e
                            ? new Extend.Extended(e.fence(), Duration.ofMillis(e.ttlMs())) : new Lost());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public Release release(String token, long fence) {
        return RedisAtomic.join(releaseAsync(token, fence));
    }

    CompletableFuture<Release> releaseAsync(String token, long fence) {
        try {
            List<Object> args = List.of(Tokens.check(token), Long.toUnsignedString(fence));
            return client.runAsync(SemRelease.DEF, List.of(keys.permits(), keys.holders()), args, true)
                    .thenApply(raw -> SemRelease.decode(raw) instanceof SemRelease.Reply.Released r
                            ? new Release.Released(r.fence()) : new Lost());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Reads the semaphore without changing it (EVALSHA_RO). */
    public SemaphoreState inspect() {
        Object raw = client.run(SemInspect.DEF, List.of(keys.permits(), keys.fence()), List.of());
        SemInspect.Reply.Permits p = (SemInspect.Reply.Permits) SemInspect.decode(raw);
        return new SemaphoreState(p.live(), Duration.ofMillis(p.nextExpiryMs()), p.lastFence());
    }
}
