package io.redisatomic;

import java.math.BigInteger;
import java.time.Duration;

/**
 * One limit: {@code limit} units per {@code period} under an {@link Algorithm}, with a burst for the
 * bucket algorithms. A Limit that exists is one the scripts accept and compute exactly (the same
 * bounds as the Rust library's {@code Limit}); anything else is a {@link BadArgumentException}.
 */
public record Limit(String name, Algorithm algorithm, long limit, Duration period, long burst) {
    public static final long MAX_LIMIT = 1_000_000_000L;
    public static final long MAX_LOG_LIMIT = 10_000L;
    public static final Duration MAX_PERIOD = Duration.ofDays(366);
    public static final int MAX_NAME_LEN = 64;
    private static final long EXACT = 1L << 52;

    public Limit {
        if (algorithm == null) {
            throw new BadArgumentException("algorithm must not be null");
        }
        long max = algorithm == Algorithm.SLIDING_LOG ? MAX_LOG_LIMIT : MAX_LIMIT;
        if (limit < 1 || limit > max) {
            throw new BadArgumentException(algorithm + " limit must be in 1.." + max + ", got " + limit);
        }
        if (period == null || period.compareTo(Duration.ofMillis(1)) < 0 || period.compareTo(MAX_PERIOD) > 0) {
            throw new BadArgumentException("period must be between 1 ms and 366 days, got " + period);
        }
        if (burst != limit && !algorithm.hasBurst()) {
            throw new BadArgumentException(algorithm + " has no burst: its capacity is its limit");
        }
        if (burst < 1 || burst > MAX_LIMIT) {
            throw new BadArgumentException("burst must be in 1.." + MAX_LIMIT + ", got " + burst);
        }
        if (name == null || name.isEmpty() || name.length() > MAX_NAME_LEN || !name.matches("[A-Za-z0-9_.-]+")) {
            throw new BadArgumentException("limit name must be 1.." + MAX_NAME_LEN + " bytes of [A-Za-z0-9_.-], got \"" + name + "\"");
        }
        long periodUs = Durations.micros(period);
        long interval = (periodUs + limit - 1) / limit;
        BigInteger product = switch (algorithm) {
            case SLIDING_WINDOW -> BigInteger.valueOf(limit).multiply(BigInteger.valueOf(periodUs));
            case TOKEN_BUCKET, GCRA -> BigInteger.valueOf(burst).multiply(BigInteger.valueOf(interval));
            default -> BigInteger.ZERO;
        };
        if (product.compareTo(BigInteger.valueOf(EXACT)) > 0) {
            throw new BadArgumentException(algorithm + " " + limit + "/" + period + " (burst " + burst
                    + ") needs more than 52 bits of µs arithmetic; use a shorter period or a smaller limit");
        }
    }

    /** {@code limit} per {@code period} under {@code algorithm}, named after it, burst = limit. */
    public static Limit of(Algorithm algorithm, long limit, Duration period) {
        return new Limit(algorithm == null ? "-" : algorithm.canonical(), algorithm, limit, period, limit);
    }

    // One factory per algorithm, as the Rust library's Limit::gcra(...) and its siblings.
    public static Limit fixedWindow(long limit, Duration period) { return of(Algorithm.FIXED_WINDOW, limit, period); }
    public static Limit anchoredWindow(long limit, Duration period) { return of(Algorithm.ANCHORED_WINDOW, limit, period); }
    public static Limit slidingLog(long limit, Duration period) { return of(Algorithm.SLIDING_LOG, limit, period); }
    public static Limit slidingWindow(long limit, Duration period) { return of(Algorithm.SLIDING_WINDOW, limit, period); }
    public static Limit tokenBucket(long limit, Duration period) { return of(Algorithm.TOKEN_BUCKET, limit, period); }
    public static Limit gcra(long limit, Duration period) { return of(Algorithm.GCRA, limit, period); }

    /** With this burst (token bucket and GCRA only). */
    public Limit withBurst(long b) {
        return new Limit(name, algorithm, limit, period, b);
    }

    /** With this name (1..=64 bytes of [A-Za-z0-9_.-]): the key part, unique in a policy. */
    public Limit named(String n) {
        return new Limit(n, algorithm, limit, period, burst);
    }

    long periodUs() {
        return Durations.micros(period);
    }

    long periodMs() {
        return (periodUs() + 999) / 1000;
    }
}
