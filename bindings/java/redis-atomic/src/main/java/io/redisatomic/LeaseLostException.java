package io.redisatomic;

/** A watched lease was lost: its watchdog found the lock no longer held by this handle (code {@code lease_lost}). */
public class LeaseLostException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public LeaseLostException(String message) {
        super(ErrorKind.LEASE_LOST, message, null);
    }

    public LeaseLostException(String message, Throwable cause) {
        super(ErrorKind.LEASE_LOST, message, cause);
    }
}
