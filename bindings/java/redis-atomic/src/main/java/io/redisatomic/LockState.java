package io.redisatomic;

import java.time.Duration;

/** What {@link Locks#inspect} answers: {@link Locked} or {@link Free}. */
public sealed interface LockState permits LockState.Locked, LockState.Free {
    /** The outcome word: {@code locked} or {@code free}. */
    String outcome();

    /** Held with {@code fence} for about {@code ttl} more. */
    record Locked(long fence, Duration ttl) implements LockState {
        @Override
        public String outcome() {
            return "locked";
        }
    }

    /** Free; the last fence issued (0 if none is remembered). */
    record Free(long lastFence) implements LockState {
        @Override
        public String outcome() {
            return "free";
        }
    }
}
