package io.redisatomic;

import java.time.Duration;
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
public final class Lock extends LeaseHandle implements Acquire, AutoCloseable {
    private final Locks locks;
    private final String resource;

    Lock(Locks locks, String resource, String token, long fence, Duration ttl, long sentNanos) {
        super(new Lease("the lock on " + resource, token, fence, ttl, sentNanos,
                t -> locks.extendAsync(resource, token, fence, t)));
        this.locks = locks;
        this.resource = resource;
    }

    @Override
    public String outcome() {
        return "acquired";
    }

    public String resource() {
        return resource;
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

    /** Releases the lock unless it already ended (try-with-resources). */
    @Override
    public void close() {
        endUnlessEnded(this::release);
    }
}
