package io.redisatomic;

import java.util.Arrays;

/**
 * The six rate-limit algorithms. Names are canonical kebab-case ({@code fixed-window}); the
 * snake_case twins ({@code fixed_window}) are accepted by {@link #parse}; the code is the key's
 * suffix.
 */
public enum Algorithm {
    FIXED_WINDOW("fixed-window", "fw"),
    ANCHORED_WINDOW("anchored-window", "aw"),
    SLIDING_LOG("sliding-log", "sl"),
    SLIDING_WINDOW("sliding-window", "sw"),
    TOKEN_BUCKET("token-bucket", "tb"),
    GCRA("gcra", "gcra");

    private final String canonical;
    private final String code;

    Algorithm(String canonical, String code) {
        this.canonical = canonical;
        this.code = code;
    }

    /** The canonical kebab-case name. */
    public String canonical() {
        return canonical;
    }

    /** The code in keys and in rl_policy's spec. */
    public String code() {
        return code;
    }

    /** Whether its burst may differ from its limit (token bucket, GCRA). */
    public boolean hasBurst() {
        return this == TOKEN_BUCKET || this == GCRA;
    }

    /** Parses a name: kebab-case or its snake_case twin; anything else is a BadArgumentException. */
    public static Algorithm parse(String name) {
        String kebab = name == null ? "" : name.replace('_', '-');
        return Arrays.stream(values()).filter(a -> a.canonical.equals(kebab)).findFirst()
                .orElseThrow(() -> new BadArgumentException("unknown algorithm `" + name
                        + "` (fixed-window, anchored-window, sliding-log, sliding-window, token-bucket, gcra)"));
    }

    @Override
    public String toString() {
        return canonical;
    }
}
