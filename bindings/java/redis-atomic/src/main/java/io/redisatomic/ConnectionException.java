package io.redisatomic;

/** Could not connect; nothing ran; transient (code {@code connection}). */
public class ConnectionException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;
    private final boolean timedOut;

    public ConnectionException(String message, boolean timedOut, Throwable cause) {
        super(ErrorKind.CONNECTION, message, cause);
        this.timedOut = timedOut;
    }

    @Override
    public boolean timedOut() {
        return timedOut;
    }
}
