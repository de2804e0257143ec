package io.redisatomic;

/**
 * Any other server error (a script's runtime error, an ACL refusal); the script may have written
 * before it failed (code {@code server_error}). {@link #serverCode()} is the server's code.
 */
public class ServerErrorException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;
    private final String serverCode;

    public ServerErrorException(String serverCode, String message) {
        super(ErrorKind.SERVER_ERROR, "server error (" + serverCode + "): " + message, null);
        this.serverCode = serverCode;
    }

    /** The server's error code ({@code ERR}, {@code NOPERM}, ...). */
    public String serverCode() {
        return serverCode;
    }
}
