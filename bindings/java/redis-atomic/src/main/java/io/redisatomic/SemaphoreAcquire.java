package io.redisatomic;

/** What a semaphore acquire answers: {@link Permit} or {@link Full}. */
public sealed interface SemaphoreAcquire permits Permit, Full {
    /** The outcome word: {@code acquired} or {@code full}. */
    String outcome();
}
