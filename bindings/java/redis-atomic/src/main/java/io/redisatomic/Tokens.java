package io.redisatomic;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Owner tokens: fresh random ones, and the check every caller-chosen one passes. */
final class Tokens {
    /** The longest owner token accepted, in bytes. */
    static final int MAX_LEN = 256;
    private static final SecureRandom RANDOM = new SecureRandom();

    private Tokens() {
    }

    /** A fresh owner token: 128 random bits in hex. */
    static String random() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** 1..=256 bytes of UTF-8 without control characters (records separate fields with newlines). */
    static String check(String token) {
        int n = token == null ? 0 : Keyspace.utf8Length(token);
        if (n == 0 || n > MAX_LEN) {
            throw new BadArgumentException("owner token must be 1.." + MAX_LEN + " bytes, got " + n);
        }
        if (token.codePoints().anyMatch(cp -> Character.isISOControl(cp) || Character.getType(cp) == Character.SURROGATE)) {
            throw new BadArgumentException("owner token must be UTF-8 without control characters");
        }
        return token;
    }
}
