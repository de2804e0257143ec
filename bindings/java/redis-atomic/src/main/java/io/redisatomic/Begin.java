package io.redisatomic;

import java.time.Duration;

/**
 * What {@link Idempotency#begin} answers: {@link Claim} (execute, then complete or fail),
 * {@link InProgress} (another executor holds it), {@link Replay} (the stored result), or
 * {@link Mismatch} (the key was used with another fingerprint).
 */
public sealed interface Begin permits Claim, Begin.InProgress, Begin.Replay, Begin.Mismatch {
    /** The outcome word: {@code claimed}, {@code in_progress}, {@code replay} or {@code mismatch}. */
    String outcome();

    /** Another executor holds a live claim; try again after {@code retryAfter}. */
    record InProgress(Duration retryAfter) implements Begin {
        @Override
        public String outcome() {
            return "in_progress";
        }
    }

    /** The key's result is stored: answer it again instead of executing. */
    record Replay(Stored stored) implements Begin {
        @Override
        public String outcome() {
            return "replay";
        }
    }

    /** The key was used with another request fingerprint. */
    record Mismatch() implements Begin {
        @Override
        public String outcome() {
            return "mismatch";
        }
    }

    /** A stored result: {@link Completed} or {@link Failed} (a final failure). */
    sealed interface Stored permits Stored.Completed, Stored.Failed {
        Response response();

        record Completed(Response response) implements Stored {
        }

        record Failed(Response response) implements Stored {
        }
    }
}
