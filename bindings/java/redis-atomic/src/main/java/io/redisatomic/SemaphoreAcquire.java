package io.redisatomic;

import java.time.Duration;

/**
 * What a semaphore acquire answers: {@link Permit} or {@link Full}. (Named apart from the lock's
 * {@link Acquire}: one Java package holds both; the vocabulary table records the spelling.)
 */
public sealed interface SemaphoreAcquire permits Permit, SemaphoreAcquire.Full {
    /** The outcome word: {@code acquired} or {@code full}. */
    String outcome();

    /** Every permit is held; the first ends in {@code retryAfter} (a release may free one sooner). */
    record Full(Duration retryAfter) implements SemaphoreAcquire {
        @Override
        public String outcome() {
            return "full";
        }
    }
}
