package io.redisatomic;

/** An argument was refused, by this library before sending or by the script; nothing ran (code {@code bad_argument}). */
public class BadArgumentException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public BadArgumentException(String message) {
        super(ErrorKind.BAD_ARGUMENT, message, null);
    }

    public BadArgumentException(String message, Throwable cause) {
        super(ErrorKind.BAD_ARGUMENT, message, cause);
    }
}
