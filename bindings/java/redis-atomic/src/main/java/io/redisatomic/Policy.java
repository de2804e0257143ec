package io.redisatomic;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;

/** One to eight limits decided together: a request is charged to every limit or to none. */
public record Policy(List<Limit> limits) {
    public static final int MAX_LIMITS = 8;

    public Policy {
        if (limits == null || limits.isEmpty() || limits.size() > MAX_LIMITS) {
            throw new BadArgumentException("a policy has 1.." + MAX_LIMITS + " limits, got " + (limits == null ? 0 : limits.size()));
        }
        limits = List.copyOf(limits);
        HashSet<String> names = new HashSet<>();
        for (Limit l : limits) {
            if (!names.add(l.name())) {
                throw new BadArgumentException("two limits are named \"" + l.name() + "\"");
            }
        }
    }

    public static Policy of(Limit... limits) {
        return new Policy(List.of(limits));
    }

    /** The largest cost any request may have: the smallest burst. */
    public long maxCost() {
        return limits.stream().mapToLong(Limit::burst).min().orElse(0);
    }

    public Duration longestPeriod() {
        return limits.stream().map(Limit::period).max(Duration::compareTo).orElse(Duration.ZERO);
    }

    void checkCost(long cost) {
        if (cost < 1) {
            throw new BadArgumentException("cost must be at least 1");
        }
        if (cost > maxCost()) {
            throw new CostExceedsBurstException(cost, maxCost());
        }
    }
}
