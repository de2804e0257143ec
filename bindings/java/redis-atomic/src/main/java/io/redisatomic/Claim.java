package io.redisatomic;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * A claim on an idempotency key (the {@code claimed} outcome): execute the request, then
 * {@link #complete} with its response (stored, replayed to every duplicate) or {@link #fail}. Pass
 * {@link #fence()} to the store the side effect writes to, so a superseded executor cannot land
 * its write. {@link #close()} ends an unfinished claim as a retryable failure (the next duplicate
 * executes), so try-with-resources never leaves a key in progress until its lease runs out.
 */
public final class Claim extends LeaseHandle implements Begin, AutoCloseable {
    private final Idempotency idem;
    private final String scope;
    private final byte[] key;
    private final boolean takeover;

    Claim(Idempotency idem, String scope, byte[] key, String token, long fence, Duration ttl, long sentNanos, boolean takeover) {
        super(new Lease("the idempotency claim", token, fence, ttl, sentNanos,
                t -> idem.extendAsync(scope, key.clone(), token, fence, t)));
        this.idem = idem;
        this.scope = scope;
        this.key = key.clone();
        this.takeover = takeover;
    }

    @Override
    public String outcome() {
        return "claimed";
    }

    /** Whether this claim took over one whose lease had run out (its executor may still be running). */
    public boolean isTakeover() {
        return takeover;
    }

    public Extend extend(Duration ttl) {
        return RedisAtomic.join(idem.extendAsync(scope, key, lease.token, lease.fence, ttl));
    }

    /** Stores {@code response} as the key's result; {@link Lost} if the claim was superseded. */
    public End complete(Response response) {
        return RedisAtomic.join(completeAsync(response));
    }

    public CompletableFuture<End> completeAsync(Response response) {
        if (!lease.end()) {
            return CompletableFuture.failedFuture(lease.endedError());
        }
        return idem.completeAsync(scope, key, lease.token, lease.fence, response);
    }

    /** Ends the claim as failed: retryable frees the key, final stores the failure's response. */
    public End fail(Failure failure) {
        return RedisAtomic.join(failAsync(failure));
    }

    public CompletableFuture<End> failAsync(Failure failure) {
        if (!lease.end()) {
            return CompletableFuture.failedFuture(lease.endedError());
        }
        return idem.failAsync(scope, key, lease.token, lease.fence, failure);
    }

    /** Fails an unfinished claim as retryable. */
    @Override
    public void close() {
        endUnlessEnded(() -> fail(new Failure.Retryable()));
    }
}
