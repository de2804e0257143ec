package io.redisatomic;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One typed, idempotent mutation of one key, as {@link FencedWrites} and {@link Cas} apply them:
 * SET (optionally with PX), HSET, HDEL, SADD, SREM, DEL, PEXPIRE. A closed set: a batch applied
 * twice leaves what applying it once leaves (so a lost reply may be resent), and every write names
 * its key (so a batch is checked to stay in one hash slot before anything is sent). Counters are
 * deliberately absent: read (CAS) and write the result.
 */
public record Write(String op, String key, List<byte[]> args, Duration ttl) {
    /** The most writes in one batch. */
    public static final int MAX_WRITES = 64;
    private static final int MAX_ITEMS = 256;
    private static final Duration MAX_TTL = Duration.ofDays(30);

    public Write {
        if (key == null || key.isEmpty()) {
            throw new BadArgumentException("write key must not be empty");
        }
        if (!List.of("set", "hset", "hdel", "sadd", "srem", "del", "pexpire").contains(op)) {
            throw new BadArgumentException("unknown write " + op);
        }
        if (op.equals("pexpire") && ttl == null || ttl != null && !op.equals("set") && !op.equals("pexpire")) {
            throw new BadArgumentException("a ttl belongs to set and pexpire only, and pexpire needs one");
        }
        args = List.copyOf(args);
        int items = op.equals("hset") ? args.size() / 2 : List.of("hdel", "sadd", "srem").contains(op) ? args.size() : 1;
        if (items < 1 || items > MAX_ITEMS) {
            throw new BadArgumentException("a write takes 1..=" + MAX_ITEMS + " fields or members, got " + items);
        }
        if (ttl != null) {
            Durations.millis("write ttl", ttl, MAX_TTL);
        }
    }

    /** SET key value. */
    public static Write set(String key, byte[] value) {
        return new Write("set", key, List.of(value), null);
    }

    /** SET key value PX ttl (1 ms..=30 days). */
    public static Write setPx(String key, byte[] value, Duration ttl) {
        return new Write("set", key, List.of(value), ttl);
    }

    /** HSET key field value ... (fields in name order). */
    public static Write hset(String key, Map<String, byte[]> fields) {
        List<byte[]> args = new ArrayList<>();
        new TreeMap<>(fields).forEach((f, v) -> {
            args.add(f.getBytes(StandardCharsets.UTF_8));
            args.add(v);
        });
        return new Write("hset", key, args, null);
    }

    /** HDEL key field ... */
    public static Write hdel(String key, String... fields) {
        return new Write("hdel", key, List.of(fields).stream().map(f -> f.getBytes(StandardCharsets.UTF_8)).toList(), null);
    }

    /** SADD key member ... */
    public static Write sadd(String key, byte[]... members) {
        return new Write("sadd", key, List.of(members), null);
    }

    /** SREM key member ... */
    public static Write srem(String key, byte[]... members) {
        return new Write("srem", key, List.of(members), null);
    }

    /** DEL key. */
    public static Write del(String key) {
        return new Write("del", key, List.of(), null);
    }

    /** PEXPIRE key ttl (1 ms..=30 days). */
    public static Write expire(String key, Duration ttl) {
        return new Write("pexpire", key, List.of(), ttl);
    }

    /** The arguments after the key, as the command (and fenced_write's spec) takes them. */
    List<Object> commandArgs() {
        List<Object> out = new ArrayList<>(args);
        if (op.equals("set") && ttl != null) {
            out.add("PX");
        }
        if (ttl != null) {
            out.add(ttl.toMillis());
        }
        return out;
    }

    /** Checks a batch: 1..=64 writes, all keys in one slot. */
    static void checkBatch(List<Write> writes) {
        if (writes.isEmpty() || writes.size() > MAX_WRITES) {
            throw new BadArgumentException("a batch takes 1..=" + MAX_WRITES + " writes, got " + writes.size());
        }
        Keyspace.requireSameSlot(writes.stream().map(Write::key).toList());
    }
}
