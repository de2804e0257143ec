package io.redisatomic;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

/**
 * What every lease handle answers ({@link Lock}, {@link Permit}, {@link Claim}): its fence, owner
 * token, TTL, when it ends at the latest, whether it has ended, and the watchdog. The end verbs and
 * {@code extend} are each handle's own.
 */
public abstract sealed class LeaseHandle permits Lock, Permit, Claim, Job {
    final Lease lease;

    LeaseHandle(Lease lease) {
        this.lease = lease;
    }

    /** The fencing token: strictly greater than every fence issued for this resource before. */
    public long fence() {
        return lease.fence;
    }

    /** The owner token (keep it with the fence to end the lease by parts). */
    public String token() {
        return lease.token;
    }

    /** The lease asked for. */
    public Duration ttl() {
        return lease.ttl;
    }

    /** By when the lease ends at the latest unless extended, on this client's clock (call sent + TTL). */
    public Instant expiresBy() {
        return lease.expiresBy();
    }

    /** Whether the handle has ended (its end verb ran, or it was closed). */
    public boolean ended() {
        return lease.ended();
    }

    /**
     * Keeps the lease alive: extends it to its TTL every third of the TTL. The future completes
     * when the handle ends (or {@link #unwatch()}), and fails with {@link LeaseLostException} when
     * an extend finds the lease lost, or when no extend succeeded for a whole TTL.
     */
    public CompletableFuture<Void> watch() {
        return lease.watch();
    }

    /** Stops the watchdog; the lease then ends at its TTL unless extended or ended. */
    public void unwatch() {
        lease.unwatch();
    }

    /** Runs {@code end} unless the handle has ended (what close() does); ended concurrently is fine. */
    void endUnlessEnded(Runnable end) {
        if (!lease.ended()) {
            try {
                end.run();
            } catch (HandleEndedException e) {
                // ended concurrently: nothing left to do
            }
        }
    }
}
