package io.redisatomic;

/** The TLS set-up (CA, client certificate) failed; nothing was sent (code {@code tls}). */
public class TlsException extends RedisAtomicException {
    private static final long serialVersionUID = 1L;

    public TlsException(String message) {
        super(ErrorKind.TLS, message, null);
    }

    public TlsException(String message, Throwable cause) {
        super(ErrorKind.TLS, message, cause);
    }
}
