package io.redisatomic;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

/** A held semaphore permit (the {@code acquired} outcome); {@link #close()} releases it. */
public final class Permit implements SemaphoreAcquire, AutoCloseable {
    private final Semaphore semaphore;
    private final Lease lease;

    Permit(Semaphore semaphore, String token, long fence, Duration ttl, long sentNanos) {
        this.semaphore = semaphore;
        this.lease = new Lease("the permit of " + semaphore.name(), token, fence, ttl, sentNanos,
                t -> semaphore.extendAsync(token, fence, t));
    }

    @Override
    public String outcome() {
        return "acquired";
    }

    public long fence() {
        return lease.fence;
    }

    public String token() {
        return lease.token;
    }

    public Duration ttl() {
        return lease.ttl;
    }

    public Instant expiresBy() {
        return lease.expiresBy();
    }

    public boolean ended() {
        return lease.ended();
    }

    public Extend extend(Duration ttl) {
        return RedisAtomic.join(semaphore.extendAsync(lease.token, lease.fence, ttl));
    }

    /** Keeps the permit alive; see {@link Lock#watch()}. */
    public CompletableFuture<Void> watch() {
        return lease.watch();
    }

    public void unwatch() {
        lease.unwatch();
    }

    /** Frees the permit; a second release is a {@link HandleEndedException}. */
    public Release release() {
        if (!lease.end()) {
            throw lease.endedError();
        }
        return RedisAtomic.join(semaphore.releaseAsync(lease.token, lease.fence));
    }

    @Override
    public void close() {
        if (!lease.ended()) {
            try {
                release();
            } catch (HandleEndedException e) {
                // released concurrently
            }
        }
    }
}
