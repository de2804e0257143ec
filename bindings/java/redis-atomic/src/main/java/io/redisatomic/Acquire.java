package io.redisatomic;

import java.time.Duration;

/** What an acquire answers: {@link Lock} (the caller holds it) or {@link Held}. */
public sealed interface Acquire permits Lock, Acquire.Held {
    /** The outcome word: {@code acquired} or {@code held}. */
    String outcome();

    /** Someone else holds the lock; its lease ends in {@code retryAfter} (a release may free it sooner). */
    record Held(Duration retryAfter) implements Acquire {
        @Override
        public String outcome() {
            return "held";
        }
    }
}
