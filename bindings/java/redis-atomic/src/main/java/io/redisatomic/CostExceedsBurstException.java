package io.redisatomic;

/**
 * A rate-limit cost above the policy's largest burst: no request of that cost can ever be
 * admitted, so nothing was sent (code {@code cost_exceeds_burst}).
 */
public class CostExceedsBurstException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;
    private final long cost;
    private final long burst;

    public CostExceedsBurstException(long cost, long burst) {
        super(ErrorKind.COST_EXCEEDS_BURST, "cost " + cost + " exceeds the burst " + burst + ": it can never be admitted", null);
        this.cost = cost;
        this.burst = burst;
    }

    public long cost() {
        return cost;
    }

    public long burst() {
        return burst;
    }
}
