package io.redisatomic;

import java.time.Duration;

/**
 * Settings of {@link Idempotency}.
 *
 * @param ttl the claim's lease (1 ms..=24 h); extend it for longer work
 * @param resultTtl how long a stored result is replayed (1 ms..=30 days)
 * @param maxResponseBytes the largest encoded response stored; store a reference beyond it
 */
public record IdempotencyConfig(Duration ttl, Duration resultTtl, int maxResponseBytes) {
    public static final Duration MAX_TTL = Duration.ofHours(24);
    public static final Duration MAX_RESULT_TTL = Duration.ofDays(30);

    public IdempotencyConfig {
        Durations.millis("ttl", ttl, MAX_TTL);
        Durations.millis("result_ttl", resultTtl, MAX_RESULT_TTL);
        if (maxResponseBytes < 0) {
            throw new BadArgumentException("maxResponseBytes must not be negative");
        }
    }

    /** 30 s claims, results kept 24 h, responses up to 1 MiB. */
    public static IdempotencyConfig defaults() {
        return new IdempotencyConfig(Duration.ofSeconds(30), Duration.ofHours(24), 1 << 20);
    }

    public IdempotencyConfig withTtl(Duration t) {
        return new IdempotencyConfig(t, resultTtl, maxResponseBytes);
    }

    public IdempotencyConfig withResultTtl(Duration t) {
        return new IdempotencyConfig(ttl, t, maxResponseBytes);
    }

    public IdempotencyConfig withMaxResponseBytes(int n) {
        return new IdempotencyConfig(ttl, resultTtl, n);
    }
}
