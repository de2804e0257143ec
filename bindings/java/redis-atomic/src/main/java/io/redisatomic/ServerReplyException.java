package io.redisatomic;

/** An error reply of the server, classified by its code: {@link #serverCode()} is that code. */
public abstract class ServerReplyException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;
    private final String serverCode;

    ServerReplyException(ErrorKind kind, String serverCode, String message) {
        super(kind, message, null);
        this.serverCode = serverCode;
    }

    /** The server's error code ({@code BUSY}, {@code ERR}, {@code NOPERM}, ...). */
    public String serverCode() {
        return serverCode;
    }
}
