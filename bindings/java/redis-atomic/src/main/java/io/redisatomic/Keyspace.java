package io.redisatomic;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Every key is {@code <namespace>:<primitive>:v<schema>:{<tag>}} + {@code :<part>} per part, as the
 * Rust library's {@code Keyspace} builds it: all keys of one call share the {@code {tag}}, so they
 * hash to one cluster slot and one script may touch them together. User-chosen identifiers that
 * may hold any bytes are digested ({@link #digest}), never placed in key names.
 */
public final class Keyspace {
    /** The longest namespace, tag or part, in bytes. */
    public static final int MAX_NAME = 512;
    private final String namespace;

    private Keyspace(String namespace) {
        this.namespace = namespace;
    }

    /** The keyspace of {@code namespace}: 1..=512 bytes without '{', '}' or ':'. */
    public static Keyspace of(String namespace) {
        if (namespace == null || namespace.isEmpty() || utf8Length(namespace) > MAX_NAME
                || namespace.chars().anyMatch(ch -> ch == '{' || ch == '}' || ch == ':')) {
            throw new BadArgumentException("namespace must be 1.." + MAX_NAME + " bytes without '{', '}' or ':', got \"" + namespace + "\"");
        }
        return new Keyspace(namespace);
    }

    public String namespace() {
        return namespace;
    }

    /** One key of {@code primitive} (schema {@code schema}) under {@code tag}, with {@code parts}. */
    public String key(String primitive, int schema, String tag, String... parts) {
        checkPart("tag", tag);
        StringBuilder b = new StringBuilder(namespace).append(':').append(primitive).append(":v").append(schema)
                .append(":{").append(tag).append('}');
        for (String p : parts) {
            checkPart("key part", p);
            b.append(':').append(p);
        }
        return b.toString();
    }

    private static void checkPart(String what, String s) {
        if (s == null || s.isEmpty()) {
            throw new BadArgumentException(what + " must not be empty");
        }
        if (utf8Length(s) > MAX_NAME) {
            throw new BadArgumentException(what + " is " + utf8Length(s) + " bytes, more than " + MAX_NAME);
        }
        if (s.indexOf('{') >= 0 || s.indexOf('}') >= 0) {
            throw new BadArgumentException(what + " must not contain '{' or '}' (they decide the cluster hash slot)");
        }
    }

    static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /**
     * 128 bits of SHA-256 of {@code value} in hex, after checking it is 1..=max bytes: how user-chosen
     * ids (rate-limited identities, request ids, claim ids) become key parts.
     */
    static String digest(String value, int max, String what) {
        int n = value == null ? 0 : utf8Length(value);
        if (n == 0 || n > max) {
            throw new BadArgumentException(what + " must be 1.." + max + " bytes, got " + n);
        }
        return sha256Hex16(value.getBytes(StandardCharsets.UTF_8));
    }

    static String sha256Hex16(byte[]... parts) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (byte[] p : parts) {
                md.update(p);
            }
            byte[] d = md.digest();
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new ClientException("SHA-256 is missing from this JDK", e);
        }
    }

    /**
     * The cluster hash slot of {@code key} (the server's CLUSTER KEYSLOT): CRC16/XMODEM of the hash
     * tag (the bytes between the first '{' and the next '}', when non-empty; else the whole key) mod 16384.
     */
    public static int slot(String key) {
        byte[] b = key.getBytes(StandardCharsets.UTF_8);
        int from = 0;
        int to = b.length;
        int open = indexOf(b, (byte) '{', 0);
        if (open >= 0) {
            int close = indexOf(b, (byte) '}', open + 1);
            if (close > open + 1) {
                from = open + 1;
                to = close;
            }
        }
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc ^= (b[i] & 0xff) << 8;
            for (int k = 0; k < 8; k++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
        }
        return (crc & 0xffff) % 16384;
    }

    private static int indexOf(byte[] b, byte x, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] == x) {
                return i;
            }
        }
        return -1;
    }

    /** Refuses keys of several slots before anything is sent (the error names slots, never keys). */
    static void requireSameSlot(List<String> keys) {
        if (keys.size() < 2) {
            return;
        }
        int first = slot(keys.get(0));
        if (keys.stream().anyMatch(k -> slot(k) != first)) {
            throw new CrossSlotException("slots " + keys.stream().map(Keyspace::slot).toList());
        }
    }
}
