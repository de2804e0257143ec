package io.redisatomic;

import java.time.Duration;

/** Every permit of a semaphore is held; the first ends in {@code retryAfter} (a release may free one sooner). */
public record Full(Duration retryAfter) implements SemaphoreAcquire {
    @Override
    public String outcome() {
        return "full";
    }
}
