package io.redisatomic;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

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
    private final Locks locks;
    private final String resource;
    private final Lease lease;

    Lock(Locks locks, String resource, String token, long fence, Duration ttl, long sentNanos) {
        this.locks = locks;
        this.resource = resource;
        this.lease = new Lease("the lock on " + resource, token, fence, ttl, sentNanos,
                t -> locks.extendAsync(resource, token, fence, t));
    }

    @Override
    public String outcome() {
        return "acquired";
    }

    public String resource() {
        return resource;
    }

    public String token() {
        return lease.token;
    }

    /** The fencing token: strictly greater than every fence issued for this resource before. */
    public long fence() {
        return lease.fence;
    }

    /** The lease asked for. */
    public Duration ttl() {
        return lease.ttl;
    }

    /** By when the lease ends at the latest unless extended, on this client's clock (acquire sent + TTL). */
    public Instant expiresBy() {
        return lease.expiresBy();
    }

    /** Whether the handle has ended (released, or closed). */
    public boolean ended() {
        return lease.ended();
    }

    /** Sets the lease to end {@code ttl} from the server's now. */
    public Extend extend(Duration ttl) {
        return locks.extend(resource, lease.token, lease.fence, ttl);
    }

    /** Frees the lock; a second release (or one after close) is a {@link HandleEndedException}. */
    public Release release() {
        return RedisAtomic.join(releaseAsync());
    }

    public CompletableFuture<Release> releaseAsync() {
        if (!lease.end()) {
            return CompletableFuture.failedFuture(lease.endedError());
        }
        return locks.releaseAsync(resource, lease.token, lease.fence);
    }

    /**
     * Keeps the lease alive: extends it to its TTL every third of the TTL. The future completes
     * when the lock is released (or {@link #unwatch()}), and fails with {@link LeaseLostException}
     * when an extend finds the lease lost, or when no extend succeeded for a whole TTL.
     */
    public CompletableFuture<Void> watch() {
        return lease.watch();
    }

    /** Stops the watchdog; the lease then ends at its TTL unless extended or released. */
    public void unwatch() {
        lease.unwatch();
    }

    /** Releases the lock unless it already ended (try-with-resources). */
    @Override
    public void close() {
        if (!lease.ended()) {
            try {
                release();
            } catch (HandleEndedException e) {
                // released concurrently: nothing left to do
            }
        }
    }
}
