package io.redisatomic;

import io.redisatomic.scripts.LockAcquire;
import io.redisatomic.scripts.LockExtend;
import io.redisatomic.scripts.LockInspect;
import io.redisatomic.scripts.LockRelease;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Locks with leases and fencing tokens under one namespace, keyed per call by resource: at most one
 * owner token holds a resource's lock at any instant of the server's clock, and every acquisition
 * gets a fence greater than every fence issued before it.
 *
 * <p>Keys ({@link #keys}): {@code <ns>:lock:v1:{resource}} holds {@code "<fence>:<token>"} with the
 * lease as its TTL; {@code <ns>:lock:v1:{resource}:fence} the last fence issued. The scripts
 * (lock_acquire, lock_extend, lock_release, lock_inspect) are all retry-safe: the same token while
 * it holds the lock gets its own fence back. An acquire with a random token is resent inside the
 * library with that token, but the caller cannot resend it (it would take a second lease), so its
 * unknown outcome says {@code retrySafe() == false}; with the caller's token it says true.
 */
public final class Locks {
    private static final int SCHEMA = 1;
    private final RedisAtomic client;
    private final Keyspace keyspace;

    Locks(RedisAtomic client, Keyspace keyspace) {
        this.client = client;
        this.keyspace = keyspace;
    }

    /** The keys of one resource's lock. */
    public record LockKeys(String lock, String fence) {
    }

    /** The keys of {@code resource}'s lock (1..=512 bytes without '{' or '}'). */
    public LockKeys keys(String resource) {
        String lock = keyspace.key("lock", SCHEMA, resource);
        return new LockKeys(lock, lock + ":fence");
    }

    /** Tries once to take {@code resource} for {@code ttl} (1 ms..=7 days) with a fresh random token. */
    public Acquire acquire(String resource, Duration ttl) {
        return RedisAtomic.join(acquireAsync(resource, ttl, null, Duration.ZERO));
    }

    /** Tries once with the caller's token: after an unknown outcome, resending it is safe. */
    public Acquire acquireWithToken(String resource, String token, Duration ttl) {
        return RedisAtomic.join(acquireAsync(resource, ttl, token, Duration.ZERO));
    }

    /** Waits up to {@code wait} for the lock (retrying while it is held, jittered); Held when it runs out. */
    public Acquire acquireTimeout(String resource, Duration ttl, Duration wait) {
        return RedisAtomic.join(acquireAsync(resource, ttl, null, wait));
    }

    /**
     * The asynchronous acquire: {@code token} null for a fresh random one; {@code wait} zero to try
     * once.
     */
    public CompletableFuture<Acquire> acquireAsync(String resource, Duration ttl, String token, Duration wait) {
        try {
            boolean callerToken = token != null;
            String t = Tokens.check(callerToken ? token : Tokens.random());
            long ttlMs = Durations.millis("ttl", ttl, Durations.MAX_TTL);
            Durations.requireNonNegative("wait", wait);
            LockKeys k = keys(resource);
            long until = System.nanoTime() + wait.toNanos();
            CompletableFuture<Acquire> out = new CompletableFuture<>();
            tryAcquire(resource, k, t, ttl, ttlMs, until, 1, out);
            return out.exceptionallyCompose(e -> CompletableFuture.failedFuture(callerSafety(e, callerToken)));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    static Throwable callerSafety(Throwable t, boolean callerToken) {
        RedisAtomicException e = Classify.failure(t);
        return e instanceof OutcomeUnknownException u ? u.withRetrySafe(callerToken) : e;
    }

    private void tryAcquire(String resource, LockKeys k, String token, Duration ttl, long ttlMs, long until,
            int attempt, CompletableFuture<Acquire> out) {
        long sent = System.nanoTime();
        client.runAsync(LockAcquire.DEF, List.of(k.lock(), k.fence()), List.of(token, ttlMs), true)
                .thenApply(LockAcquire::decode)
                .whenComplete((r, t) -> {
                    if (t != null) {
                        out.completeExceptionally(t);
                    } else if (r instanceof LockAcquire.Reply.Acquired a) {
                        out.complete(new Lock(this, resource, token, a.fence(), ttl, sent));
                    } else {
                        LockAcquire.Reply.Held h = (LockAcquire.Reply.Held) r;
                        long left = until - System.nanoTime();
                        if (left <= 0) {
                            out.complete(new Acquire.Held(Duration.ofMillis(h.retryAfterMs())));
                            return;
                        }
                        long backoff = new RetryPolicy(1, Duration.ZERO, Duration.ofMillis(10), Duration.ofSeconds(1))
                                .backoffNanos(attempt);
                        long pause = Math.min(Math.min(backoff, Math.max(h.retryAfterMs(), 1) * 1_000_000L), left);
                        CompletableFuture.delayedExecutor(pause, TimeUnit.NANOSECONDS).execute(
                                () -> tryAcquire(resource, k, token, ttl, ttlMs, until, attempt + 1, out));
                    }
                });
    }

    /** Sets the lease of {@code token}'s lock on {@code resource} to end {@code ttl} from the server's now. */
    public Extend extend(String resource, String token, long fence, Duration ttl) {
        return RedisAtomic.join(extendAsync(resource, token, fence, ttl));
    }

    public CompletableFuture<Extend> extendAsync(String resource, String token, long fence, Duration ttl) {
        try {
            long ttlMs = Durations.millis("ttl", ttl, Durations.MAX_TTL);
            List<Object> args = List.of(Tokens.check(token), Long.toUnsignedString(fence), ttlMs);
            return client.runAsync(LockExtend.DEF, List.of(keys(resource).lock()), args, LockExtend.DEF.retrySafe())
                    .thenApply(raw -> LockExtend.decode(raw) instanceof LockExtend.Reply.Extended e
                            ? new Extend.Extended(e.fence(), Duration.ofMillis(e.ttlMs()))
                            : new Lost());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Frees {@code resource} if {@code token} holds it with {@code fence}. */
    public Release release(String resource, String token, long fence) {
        return RedisAtomic.join(releaseAsync(resource, token, fence));
    }

    public CompletableFuture<Release> releaseAsync(String resource, String token, long fence) {
        try {
            List<Object> args = List.of(Tokens.check(token), Long.toUnsignedString(fence));
            return client.runAsync(LockRelease.DEF, List.of(keys(resource).lock()), args, LockRelease.DEF.retrySafe())
                    .thenApply(raw -> LockRelease.decode(raw) instanceof LockRelease.Reply.Released r
                            ? new Release.Released(r.fence())
                            : new Lost());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static LockState free(LockInspect.Reply r) {
        return new LockState.Free(((LockInspect.Reply.Free) r).lastFence());
    }

    /** Reads {@code resource}'s lock without changing it (EVALSHA_RO: runs on replicas). */
    public LockState inspect(String resource) {
        return RedisAtomic.join(inspectAsync(resource));
    }

    public CompletableFuture<LockState> inspectAsync(String resource) {
        try {
            LockKeys k = keys(resource);
            return client.runAsync(LockInspect.DEF, List.of(k.lock(), k.fence()), List.of(), true)
                    .thenApply(LockInspect::decode)
                    .thenApply(r -> r instanceof LockInspect.Reply.Held h
                            ? new LockState.Locked(h.fence(), Duration.ofMillis(h.ttlMs()))
                            : free(r));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
