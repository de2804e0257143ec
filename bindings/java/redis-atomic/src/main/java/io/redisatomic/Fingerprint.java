package io.redisatomic;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * What identifies a request's content (method, path, body...): 128 bits of SHA-256 over the parts,
 * each prefixed by its length as a big-endian u64, so ("ab", "c") and ("a", "bc") differ. A
 * duplicate key with another fingerprint is a {@link Begin.Mismatch}.
 */
public final class Fingerprint {
    private final byte[] digest;

    private Fingerprint(byte[] digest) {
        this.digest = digest;
    }

    /** The fingerprint of {@code parts}, in order. */
    public static Fingerprint of(byte[]... parts) {
        byte[][] all = new byte[parts.length * 2][];
        for (int i = 0; i < parts.length; i++) {
            all[2 * i] = ByteBuffer.allocate(8).putLong(parts[i].length).array();
            all[2 * i + 1] = parts[i];
        }
        return new Fingerprint(HexFormat.of().parseHex(Keyspace.sha256Hex16(all)));
    }

    /** The fingerprint of text parts (their UTF-8 bytes). */
    public static Fingerprint ofStrings(String... parts) {
        return of(Arrays.stream(parts).map(p -> p.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new));
    }

    /** Lower-case hex, as the scripts store it. */
    public String hex() {
        return HexFormat.of().formatHex(digest);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Fingerprint f && Arrays.equals(digest, f.digest);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(digest);
    }

    @Override
    public String toString() {
        return "Fingerprint[" + hex() + "]";
    }
}
