package io.redisatomic;

/**
 * Any other server error (a script's runtime error, an ACL refusal); the script may have written
 * before it failed (code {@code server_error}).
 */
public class ServerErrorException extends ServerReplyException {
    private static final long serialVersionUID = 1L;

    public ServerErrorException(String serverCode, String message) {
        super(ErrorKind.SERVER_ERROR, serverCode, "server error (" + serverCode + "): " + message);
    }
}
