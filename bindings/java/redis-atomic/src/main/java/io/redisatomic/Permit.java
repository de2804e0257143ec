package io.redisatomic;

import java.time.Duration;

/** A held semaphore permit (the {@code acquired} outcome); {@link #close()} releases it. */
public final class Permit extends LeaseHandle implements SemaphoreAcquire, AutoCloseable {
    private final Semaphore semaphore;

    Permit(Semaphore semaphore, String token, long fence, Duration ttl, long sentNanos) {
        super(new Lease("the permit of " + semaphore.name(), token, fence, ttl, sentNanos,
                t -> semaphore.extendAsync(token, fence, t)));
        this.semaphore = semaphore;
    }

    @Override
    public String outcome() {
        return "acquired";
    }

    public Extend extend(Duration ttl) {
        return RedisAtomic.join(semaphore.extendAsync(lease.token, lease.fence, ttl));
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
        endUnlessEnded(this::release);
    }
}
