package peers.driver;

/**
 * A call's failure as the protocol's error code (conformance/vocabulary.json): {@code connection}
 * when the driver never had a connection to send it on (nothing ran), {@code outcome_unknown} when
 * the call may have run.
 */
final class Failed extends Exception {
    private static final long serialVersionUID = 1L;
    private final String code;

    Failed(String code, Throwable cause) {
        super(code, cause);
        this.code = code;
    }

    String code() {
        return code;
    }

    static Failed unknown(Throwable cause) {
        return new Failed("outcome_unknown", cause);
    }

    static Failed notConnected(Throwable cause) {
        return new Failed("connection", cause);
    }
}
