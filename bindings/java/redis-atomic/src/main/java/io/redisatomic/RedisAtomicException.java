package io.redisatomic;

/**
 * The base of every error this library raises. The facts are the vocabulary's (the same codes and
 * flags in every face): {@link #code()}, {@link #nothingRan()}, {@link #isTransient()},
 * {@link #timedOut()}, {@link #retrySafe()}. Unchecked, so the blocking methods and their
 * {@code CompletableFuture} twins fail with the same exceptions.
 */
public abstract class RedisAtomicException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final ErrorKind kind;

    RedisAtomicException(ErrorKind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    /** The vocabulary's error code ({@code not_sent}, {@code outcome_unknown}, ...). */
    public String code() {
        return kind.code;
    }

    /** Nothing ran on the server: a resend cannot repeat an effect. */
    public boolean nothingRan() {
        return kind.nothingRan;
    }

    /** A prompt retry may succeed and cannot repeat an effect. */
    public boolean isTransient() {
        return kind.transientFailure;
    }

    /** The client gave up waiting for a reply (in some attempt). */
    public boolean timedOut() {
        return false;
    }

    /** Resending the same call cannot repeat its effect: nothing ran, or the call is idempotent. */
    public boolean retrySafe() {
        return nothingRan();
    }
}
