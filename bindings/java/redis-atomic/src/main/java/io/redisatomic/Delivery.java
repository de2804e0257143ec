package io.redisatomic;

import java.util.Locale;

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

    /** {@code eval}, {@code evalsha} (an alias of {@code eval}) or {@code functions}, in any case. */
    public static Delivery parse(String name) {
        return switch (name == null ? "" : name.toLowerCase(Locale.ROOT)) {
            case "eval", "evalsha" -> EVAL;
            case "functions" -> FUNCTIONS;
            default -> throw new BadArgumentException("delivery must be eval (alias evalsha) or functions, got " + name);
        };
    }
}
