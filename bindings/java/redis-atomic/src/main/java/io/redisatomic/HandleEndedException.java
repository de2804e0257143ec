package io.redisatomic;

/** A handle's end verb (release) was already called; nothing was sent (code {@code handle_ended}). */
public class HandleEndedException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public HandleEndedException(String message) {
        super(ErrorKind.HANDLE_ENDED, message, null);
    }

    public HandleEndedException(String message, Throwable cause) {
        super(ErrorKind.HANDLE_ENDED, message, cause);
    }
}
