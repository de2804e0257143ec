package io.redisatomic;

import java.time.Duration;
import java.util.List;

/** What a rate-limit consume answers: {@link Allowed} or {@link Limited}. */
public sealed interface Decision permits Decision.Allowed, Decision.Limited {
    /** The outcome word: {@code allowed} or {@code limited}. */
    String outcome();

    /** Each limit's state after the decision, in the policy's order. */
    List<LimitStatus> limits();

    /** The decision was recorded for this request id before, and is answered again without charging. */
    boolean replayed();

    /** Admitted and charged to every limit; {@code remaining} is the smallest left. */
    record Allowed(long remaining, Duration resetAfter, List<LimitStatus> limits, boolean replayed) implements Decision {
        @Override
        public String outcome() {
            return "allowed";
        }
    }

    /** Refused; nothing was charged. Try again after {@code retryAfter}. */
    record Limited(Duration retryAfter, Duration resetAfter, List<LimitStatus> limits, boolean replayed) implements Decision {
        @Override
        public String outcome() {
            return "limited";
        }
    }

    /** One limit's state: units left, when it is full again, when a refused request could pass. */
    record LimitStatus(long remaining, Duration resetAfter, Duration retryAfter) {
    }
}
