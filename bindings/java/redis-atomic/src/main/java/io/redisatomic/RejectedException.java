package io.redisatomic;

import java.util.Set;

/**
 * A server refused the request before running it ({@code BUSY}, {@code READONLY}, {@code OOM},
 * ...); nothing ran (code {@code rejected}). {@link #serverCode()} is the server's code.
 */
public class RejectedException extends ServerReplyException {
    private static final long serialVersionUID = 1L;
    /** Refusals worth retrying soon. */
    static final Set<String> TRANSIENT = Set.of("NOSCRIPT", "BUSY", "LOADING", "READONLY",
            "NOREPLICAS", "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN");
    /** Refusals before running that will not clear by themselves soon. */
    static final Set<String> LASTING = Set.of("OOM", "MISCONF", "NOTBUSY");

    public RejectedException(String serverCode, String message) {
        super(ErrorKind.REJECTED, serverCode, "rejected by the server before running (" + serverCode + "): " + message);
    }

    @Override
    public boolean isTransient() {
        return TRANSIENT.contains(serverCode());
    }
}
