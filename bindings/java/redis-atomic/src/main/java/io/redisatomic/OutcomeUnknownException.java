package io.redisatomic;

/**
 * The request may or may not have run: a timeout, or a connection lost after sending (code
 * {@code outcome_unknown}). {@link #retrySafe()} says whether resending the same call cannot repeat
 * its effect (set per call: a lock acquire with the caller's token is, one with a random token is
 * not); {@link #attempts()} counts the attempts made.
 */
public class OutcomeUnknownException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;
    private final int attempts;
    private final boolean timedOut;
    private final boolean retrySafe;

    public OutcomeUnknownException(String reason, int attempts, boolean timedOut, boolean retrySafe, Throwable cause) {
        super(ErrorKind.OUTCOME_UNKNOWN, "outcome unknown after " + attempts + " attempt(s): " + reason, cause);
        this.attempts = attempts;
        this.timedOut = timedOut;
        this.retrySafe = retrySafe;
    }

    /** Attempts made; the last had this outcome. */
    public int attempts() {
        return attempts;
    }

    @Override
    public boolean timedOut() {
        return timedOut;
    }

    @Override
    public boolean retrySafe() {
        return retrySafe;
    }

    /** The same outcome, with the caller's retry safety (an entry of its own choosing may not be). */
    OutcomeUnknownException withRetrySafe(boolean safe) {
        return new OutcomeUnknownException(getMessage().replaceFirst("^outcome unknown after \\d+ attempt\\(s\\): ", ""),
                attempts, timedOut, safe, getCause());
    }
}
