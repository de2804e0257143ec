package io.redisatomic;

import java.time.Duration;

/** One job's state, as {@link Queue#inspect} reads it without changing it. */
public sealed interface JobState permits JobState.Queued, JobState.Running, JobState.Dead, JobState.Acked, JobState.Unknown {
    /** The outcome word: {@code queued}, {@code running}, {@code dead}, {@code acked} or {@code unknown}. */
    String outcome();

    /** Waiting; due in {@code dueIn}. */
    record Queued(Duration dueIn, long deliveries, long lastFence) implements JobState {
        @Override
        public String outcome() {
            return "queued";
        }
    }

    /** Leased to {@code worker} under {@code fence}, for {@code ttl} more. */
    record Running(long fence, long deliveries, Duration ttl, String worker) implements JobState {
        @Override
        public String outcome() {
            return "running";
        }
    }

    /** In the dead letters, with its last error. */
    record Dead(long deliveries, String error) implements JobState {
        @Override
        public String outcome() {
            return "dead";
        }
    }

    /** Acked within the dedup window. */
    record Acked(long fence) implements JobState {
        @Override
        public String outcome() {
            return "acked";
        }
    }

    /** No such job. */
    record Unknown() implements JobState {
        @Override
        public String outcome() {
            return "unknown";
        }
    }
}
