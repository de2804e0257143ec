package io.redisatomic;

import java.time.Duration;

/** What an extend answers: {@link Extended} or {@link Lost}. */
public sealed interface Extend permits Extend.Extended, Lost {
    /** The outcome word: {@code extended} or {@code lost}. */
    String outcome();

    /** The lease now ends {@code ttl} from the server's now; its fence is unchanged. */
    record Extended(long fence, Duration ttl) implements Extend {
        @Override
        public String outcome() {
            return "extended";
        }
    }
}
