package io.redisatomic;

/** The client failed on its own side before anything was sent (code {@code client}). */
public class ClientException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public ClientException(String message) {
        super(ErrorKind.CLIENT, message, null);
    }

    public ClientException(String message, Throwable cause) {
        super(ErrorKind.CLIENT, message, cause);
    }
}
