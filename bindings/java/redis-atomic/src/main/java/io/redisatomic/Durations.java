package io.redisatomic;

import java.time.Duration;

/** Duration checks and conversions shared by the primitives: every refusal is a BadArgumentException. */
final class Durations {
    /** The longest lease or TTL accepted: 7 days. */
    static final Duration MAX_TTL = Duration.ofDays(7);

    private Durations() {
    }

    static void requireNonNegative(String what, Duration d) {
        if (d == null || d.isNegative()) {
            throw new BadArgumentException(what + " must be a non-negative duration, got " + d);
        }
    }

    /** {@code d} in whole milliseconds, refused outside 1 ms..=max. */
    static long millis(String what, Duration d, Duration max) {
        if (d == null || d.compareTo(Duration.ofMillis(1)) < 0 || d.compareTo(max) > 0) {
            throw new BadArgumentException(what + " must be between 1 ms and " + max.toMillis() + " ms, got " + d);
        }
        return d.toMillis();
    }

    /** {@code d} in whole microseconds (saturating). */
    static long micros(Duration d) {
        try {
            return Math.multiplyExact(d.getSeconds(), 1_000_000L) + d.getNano() / 1000;
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
