package io.redisatomic;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Bounds the retries of one call: refusals that ran nothing and are transient always; unknown
 * outcomes only for a retry-safe call. Full-jitter exponential backoff; no retry starts after
 * {@code deadline} since the first attempt.
 *
 * @param maxAttempts attempts in all, the first included (1: never retry)
 * @param deadline no retry starts after this much time since the first attempt
 * @param baseBackoff backoff base
 * @param maxBackoff backoff cap
 */
public record RetryPolicy(int maxAttempts, Duration deadline, Duration baseBackoff, Duration maxBackoff) {
    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new BadArgumentException("maxAttempts must be at least 1, got " + maxAttempts);
        }
        Durations.requireNonNegative("deadline", deadline);
        Durations.requireNonNegative("baseBackoff", baseBackoff);
        Durations.requireNonNegative("maxBackoff", maxBackoff);
    }

    /** The library's: 4 attempts within 3 s, backoff from 5 ms up to 250 ms. */
    public static RetryPolicy defaults() {
        return new RetryPolicy(4, Duration.ofSeconds(3), Duration.ofMillis(5), Duration.ofMillis(250));
    }

    /** Never retry. */
    public static RetryPolicy none() {
        return new RetryPolicy(1, Duration.ZERO, Duration.ZERO, Duration.ZERO);
    }

    /** A full-jitter wait before attempt {@code n + 1} (n ≥ 1), in nanoseconds. */
    long backoffNanos(int n) {
        long cap = maxBackoff.toNanos();
        long base = baseBackoff.toNanos();
        long ceiling = n < 30 && base << (n - 1) < cap ? base << (n - 1) : cap;
        return ceiling <= 0 ? 0 : ThreadLocalRandom.current().nextLong(ceiling + 1);
    }
}
