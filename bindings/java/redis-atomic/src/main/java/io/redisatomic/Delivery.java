package io.redisatomic;

/**
 * How scripts reach the server: {@code EVAL} ({@code EVALSHA} / {@code EVALSHA_RO}, with
 * {@code SCRIPT LOAD} on {@code NOSCRIPT}) or {@code FUNCTIONS} ({@code FCALL} / {@code FCALL_RO}
 * of the versioned Function library {@code redis-atomic functions deploy} installed). Both run the
 * same Lua, so the answers are the same; {@code FCALL} names a function the operator deployed
 * instead of a script body the client ships, which is what a platform that vets its server code
 * wants.
 */
public enum Delivery {
    EVAL, FUNCTIONS;

    /** The canonical spelling: {@code eval} or {@code functions}. */
    public String canonical() {
        return this == EVAL ? "eval" : "functions";
    }

    /** {@code eval} (alias {@code evalsha}) or {@code functions} (alias {@code fcall}); case-sensitive. */
    public static Delivery parse(String name) {
        return switch (name == null ? "" : name) {
            case "eval", "evalsha" -> EVAL;
            case "functions", "fcall" -> FUNCTIONS;
            default -> throw new BadArgumentException("delivery must be eval (alias evalsha) or functions (alias fcall), got \"" + name + "\"");
        };
    }
}
