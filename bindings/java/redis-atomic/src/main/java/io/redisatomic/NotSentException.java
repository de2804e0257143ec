package io.redisatomic;

/** The request never reached a server; nothing ran. Safe to retry (code {@code not_sent}). */
public class NotSentException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public NotSentException(String message) {
        super(ErrorKind.NOT_SENT, message, null);
    }

    public NotSentException(String message, Throwable cause) {
        super(ErrorKind.NOT_SENT, message, cause);
    }
}
