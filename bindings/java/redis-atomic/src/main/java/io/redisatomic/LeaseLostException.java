package io.redisatomic;

/**
 * A watched lease was lost (code {@code lease_lost}), with why: {@link Reason#NOT_HELD} (an extend
 * found the lease no longer this handle's) or {@link Reason#UNCONFIRMED} (no renewal was confirmed
 * before the proven lease ended, less the margin: the server may still hold it, but this holder
 * can no longer prove it).
 */
public class LeaseLostException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;
    private final Reason reason;

    /**
     * Why a watched lease was lost: {@code NOT_HELD}: the server said this token and fence no
     * longer hold the lease; {@code UNCONFIRMED}: no renewal was confirmed before the proven lease
     * ended.
     */
    public enum Reason {
        NOT_HELD, UNCONFIRMED
    }

    public LeaseLostException(String message) {
        this(Reason.NOT_HELD, message, null);
    }

    public LeaseLostException(String message, Throwable cause) {
        this(Reason.NOT_HELD, message, cause);
    }

    public LeaseLostException(Reason reason, String message, Throwable cause) {
        super(ErrorKind.LEASE_LOST, message, cause);
        this.reason = reason;
    }

    /** Why the lease was lost. */
    public Reason reason() {
        return reason;
    }
}
