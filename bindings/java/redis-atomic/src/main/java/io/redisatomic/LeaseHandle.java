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
     * when the handle ends (or {@link #unwatch()}), and fails with {@link LeaseLostException}:
     * reason {@code NOT_HELD} when an extend finds the lease lost, {@code UNCONFIRMED} when no
     * extend was confirmed before the proven lease ends (less 5 %).
     */
    public CompletableFuture<Void> watch() {
        return lease.watch(WatchConfig.defaults());
    }

    /** The same with this tuning (when to renew, how early to declare the lease unconfirmed). */
    public CompletableFuture<Void> watch(WatchConfig config) {
        return lease.watch(config);
    }

    /** Whether the lease is still provably held: not ended, not lost, and the last confirmed lease (less the margin) not over. */
    public boolean isHeld() {
        return lease.isHeld();
    }

    /** Renewals that failed in a row (0 after a confirmed one). */
    public int failedRenewals() {
        return lease.failedRenewals();
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
