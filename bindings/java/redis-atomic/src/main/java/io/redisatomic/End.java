package io.redisatomic;

/** What a complete or fail answers: {@link Stored} or {@link Lost} (the claim was superseded). */
public sealed interface End permits End.Stored, Lost {
    /** The outcome word: {@code stored} or {@code lost}. */
    String outcome();

    /** The result (or failure) is stored; duplicates replay it. */
    record Stored() implements End {
        @Override
        public String outcome() {
            return "stored";
        }
    }
}
