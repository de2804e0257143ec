package io.redisatomic;

import java.time.Duration;

/** A leased job (from {@link Queue#claim}): ack it once done, or nack it; its lease is a handle's. */
public final class Job extends LeaseHandle {
    private final Queue queue;
    private final String id;
    private final byte[] payload;
    private final long deliveries;
    private final long claimedAtMs;

    Job(Queue queue, String id, byte[] payload, long deliveries, long claimedAtMs, String worker, long fence,
            Duration ttl, long sentNanos) {
        super(new Lease("job " + id, worker, fence, ttl, sentNanos, t -> queue.extendAsync(id, worker, fence, t)));
        this.queue = queue;
        this.id = id;
        this.payload = payload;
        this.deliveries = deliveries;
        this.claimedAtMs = claimedAtMs;
    }

    public String id() {
        return id;
    }

    public byte[] payload() {
        return payload.clone();
    }

    /** This delivery's number (1 for the first). */
    public long deliveries() {
        return deliveries;
    }

    /** When the claim was made, on the server's clock (ms since the epoch). */
    public long claimedAtMs() {
        return claimedAtMs;
    }

    public Extend extend(Duration ttl) {
        return RedisAtomic.join(queue.extendAsync(id, lease.token, lease.fence, ttl));
    }

    /** Marks the job done: true the first time, false when this lease no longer holds it. */
    public boolean ack() {
        if (!lease.end()) {
            throw lease.endedError();
        }
        return queue.ack(id, lease.token, lease.fence);
    }

    /** Gives the job back with {@code error}; its last delivery makes it a dead letter. */
    public Queue.Nack nack(Duration retryAfter, String error) {
        if (!lease.end()) {
            throw lease.endedError();
        }
        return queue.nack(id, lease.token, lease.fence, retryAfter, error);
    }
}
