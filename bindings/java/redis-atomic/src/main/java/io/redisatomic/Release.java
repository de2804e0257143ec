package io.redisatomic;

/** What a release answers: {@link Released} or {@link Lost}. */
public sealed interface Release permits Release.Released, Lost {
    /** The outcome word: {@code released} or {@code lost}. */
    String outcome();

    /** The lease was held by this token and fence and is now free. */
    record Released(long fence) implements Release {
        @Override
        public String outcome() {
            return "released";
        }
    }
}
