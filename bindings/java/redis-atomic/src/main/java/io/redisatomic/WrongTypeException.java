package io.redisatomic;

/** A key holds a value of another type; the script may have written before it failed (code {@code wrong_type}). */
public class WrongTypeException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public WrongTypeException(String message) {
        super(ErrorKind.WRONG_TYPE, message, null);
    }

    public WrongTypeException(String message, Throwable cause) {
        super(ErrorKind.WRONG_TYPE, message, cause);
    }
}
