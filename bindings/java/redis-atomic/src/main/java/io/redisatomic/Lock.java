package io.redisatomic;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A held lock (the {@code acquired} outcome): its resource, owner token and fence. Pass
 * {@link #fence()} to every write the lease protects and have the downstream refuse smaller ones.
 * {@link #close()} releases it, so try-with-resources frees the lock; {@link #watch()} keeps the
 * lease alive on a scheduler and signals its loss.
 *
 * <p>What it does not guarantee: a lease can expire while its holder is paused (GC, a stalled
 * host); the fence, checked downstream, is what makes a late holder harmless.
 */
public final class Lock implements Acquire, AutoCloseable {
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "redis-atomic-watchdog");
        t.setDaemon(true);
        return t;
    });
    private final Locks locks;
    private final String resource;
    private final String token;
    private final long fence;
    private final Duration ttl;
    private final long acquiredAtNanos;
    private final Instant acquiredAt;
    private final AtomicBoolean ended = new AtomicBoolean();
    private final CompletableFuture<Void> watched = new CompletableFuture<>();
    private volatile ScheduledFuture<?> renewal;
    private volatile long lastRenewedNanos;

    Lock(Locks locks, String resource, String token, long fence, Duration ttl, long acquiredAtNanos) {
        this.locks = locks;
        this.resource = resource;
        this.token = token;
        this.fence = fence;
        this.ttl = ttl;
        this.acquiredAtNanos = acquiredAtNanos;
        this.acquiredAt = Instant.now().minusNanos(System.nanoTime() - acquiredAtNanos);
        this.lastRenewedNanos = acquiredAtNanos;
    }

    @Override
    public String outcome() {
        return "acquired";
    }

    public String resource() {
        return resource;
    }

    public String token() {
        return token;
    }

    /** The fencing token: strictly greater than every fence issued for this resource before. */
    public long fence() {
        return fence;
    }

    /** The lease asked for. */
    public Duration ttl() {
        return ttl;
    }

    /**
     * By when the lease ends at the latest unless extended, on this client's clock: the moment the
     * acquire was sent plus the TTL (the server's lease began after that).
     */
    public Instant expiresBy() {
        return acquiredAt.plus(ttl);
    }

    /** Whether the handle has ended (released, or closed). */
    public boolean ended() {
        return ended.get();
    }

    /** Sets the lease to end {@code ttl} from the server's now. */
    public Extend extend(Duration newTtl) {
        return locks.extend(resource, token, fence, newTtl);
    }

    /** Frees the lock; a second release (or one after close) is a {@link HandleEndedException}. */
    public Release release() {
        return RedisAtomic.join(releaseAsync());
    }

    public CompletableFuture<Release> releaseAsync() {
        if (!ended.compareAndSet(false, true)) {
            return CompletableFuture.failedFuture(new HandleEndedException("the lock on " + resource + " was already released"));
        }
        stopWatch();
        watched.complete(null);
        return locks.releaseAsync(resource, token, fence);
    }

    /**
     * Keeps the lease alive: extends it to {@code ttl} every third of {@code ttl}. The future
     * completes when the lock is released (or {@link #unwatch()}), and fails with
     * {@link LeaseLostException} when an extend finds the lease lost, or when no extend succeeded
     * before the lease may have ended.
     */
    public CompletableFuture<Void> watch() {
        if (ended.get()) {
            return CompletableFuture.failedFuture(new HandleEndedException("the lock on " + resource + " has ended"));
        }
        long period = Math.max(1, ttl.toMillis() / 3);
        if (renewal == null) {
            renewal = WATCHDOG.scheduleAtFixedRate(this::renew, period, period, TimeUnit.MILLISECONDS);
        }
        return watched;
    }

    /** Stops the watchdog; the lease then ends at its TTL unless extended or released. */
    public void unwatch() {
        stopWatch();
        watched.complete(null);
    }

    private void stopWatch() {
        ScheduledFuture<?> r = renewal;
        if (r != null) {
            r.cancel(false);
        }
    }

    private void renew() {
        if (watched.isDone()) {
            return;
        }
        locks.extendAsync(resource, token, fence, ttl).whenComplete((r, t) -> {
            if (r instanceof Extend.Extended) {
                lastRenewedNanos = System.nanoTime();
            } else if (r instanceof Lost) {
                lose("an extend found the lease lost");
            } else if (System.nanoTime() - lastRenewedNanos >= ttl.toNanos()) {
                lose("no extend succeeded within the lease: " + (t == null ? "" : Classify.failure(t).getMessage()));
            }
        });
    }

    private void lose(String why) {
        stopWatch();
        watched.completeExceptionally(new LeaseLostException("the lock on " + resource + " (fence " + fence + ") was lost: " + why));
    }

    /** Releases the lock unless it already ended (try-with-resources). */
    @Override
    public void close() {
        if (!ended.get()) {
            try {
                release();
            } catch (HandleEndedException e) {
                // released concurrently: nothing left to do
            }
        }
    }
}
