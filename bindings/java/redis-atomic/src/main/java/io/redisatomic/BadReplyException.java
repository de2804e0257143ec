package io.redisatomic;

/** The server answered in a shape this library does not know; the call ran (code {@code bad_reply}). */
public class BadReplyException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public BadReplyException(String message) {
        super(ErrorKind.BAD_REPLY, message, null);
    }

    public BadReplyException(String message, Throwable cause) {
        super(ErrorKind.BAD_REPLY, message, cause);
    }
}
