package io.redisatomic;

import io.lettuce.core.SetArgs;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * Optimistic transactions over the caller's keys (WATCH, read, decide, MULTI … EXEC), each attempt
 * on a connection of its own (WATCH belongs to a connection, so the library's shared one cannot
 * carry it). Invariant: an update commits only if none of the keys it read changed between its
 * reads and its EXEC, so concurrent read-modify-write updates never lose one another's writes.
 *
 * <p>Keys: the caller's, all in one hash slot (reads and writes). Mechanism: WATCH the read keys,
 * read them, let {@code decide} answer {@link CasDecision#commit} (typed {@link Write}s) or
 * {@link CasDecision#abort}, then MULTI, the writes, EXEC; a discarded EXEC (a key changed) is a
 * conflict and the update runs again from the reads, up to the policy's attempts.
 *
 * <p>Retries: anything before EXEC is resent freely (nothing was applied: the server drops a
 * transaction whose connection closes before EXEC); once EXEC was sent, a lost reply is
 * {@link OutcomeUnknownException} with {@code retrySafe() == false} and the update is never
 * resent (the writes may have applied). {@code decide}'s own exceptions propagate unchanged.
 *
 * <p>Not guaranteed: progress under constant contention ({@link CasOutcome.Conflict} after the
 * attempts); a write failing inside EXEC (a wrong type) does not undo the writes before it;
 * durability is the server's (a failover may lose an acknowledged commit). On a cluster each
 * attempt opens its own connection to the key's primary (not pooled).
 */
public final class Cas {
    /** The most keys one update reads. */
    public static final int MAX_READS = 32;
    private static final int MAX_IDLE = 8;
    private final RedisAtomic client;
    private final RetryPolicy policy;
    private final ConcurrentLinkedQueue<Link.Dedicated> idle;

    Cas(RedisAtomic client, RetryPolicy policy, ConcurrentLinkedQueue<Link.Dedicated> idle) {
        this.client = client;
        this.policy = policy;
        this.idle = idle;
    }

    /** With this retry policy for conflicts and failures before EXEC (default: 16 attempts within 2 s). */
    public Cas withPolicy(RetryPolicy p) {
        return new Cas(client, p, idle);
    }

    /** One read of an update: GET, HGET, HGETALL, SMEMBERS, EXISTS or PTTL of one key. */
    public record Read(String kind, String key, String field) {
        public static Read get(String key) { return new Read("get", key, null); }
        public static Read hget(String key, String field) { return new Read("hget", key, field); }
        public static Read hgetAll(String key) { return new Read("hgetall", key, null); }
        public static Read smembers(String key) { return new Read("smembers", key, null); }
        public static Read exists(String key) { return new Read("exists", key, null); }
        public static Read pttl(String key) { return new Read("pttl", key, null); }
    }

    /** The values read, in the reads' order (byte[] or null, Map, Set, Long). */
    public record Snapshot(List<Object> values) {
        /** The i-th value as UTF-8 text (null when absent). */
        public String string(int i) {
            return values.get(i) instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : null;
        }
    }

    /** What {@code decide} answers: the writes to commit, or abort (nothing written). */
    public record CasDecision(List<Write> writes, boolean aborts) {
        public static CasDecision commit(List<Write> writes) {
            return new CasDecision(List.copyOf(writes), false);
        }

        public static CasDecision abort() {
            return new CasDecision(List.of(), true);
        }
    }

    /** What an update answers, with the attempts it took. */
    public sealed interface CasOutcome permits CasOutcome.Committed, CasOutcome.Aborted, CasOutcome.Conflict {
        String outcome();

        int attempts();

        /** The writes were applied. */
        record Committed(int attempts) implements CasOutcome {
            @Override
            public String outcome() {
                return "committed";
            }
        }

        /** {@code decide} chose not to write. */
        record Aborted(int attempts) implements CasOutcome {
            @Override
            public String outcome() {
                return "aborted";
            }
        }

        /** The keys kept changing: the attempts ran out, nothing written. */
        record Conflict(int attempts) implements CasOutcome {
            @Override
            public String outcome() {
                return "conflict";
            }
        }
    }

    /** Reads {@code reads}, lets {@code decide} choose, commits if nothing it read changed; again on conflict. */
    public CasOutcome update(List<Read> reads, Function<Snapshot, CasDecision> decide) {
        if (reads.isEmpty() || reads.size() > MAX_READS) {
            throw new BadArgumentException("an update reads 1..=" + MAX_READS + " keys, got " + reads.size());
        }
        List<String> keys = reads.stream().map(Read::key).toList();
        Keyspace.requireSameSlot(keys);
        long deadline = System.nanoTime() + policy.deadline().toNanos();
        for (int attempt = 1;; attempt++) {
            CasAttempt a = new CasAttempt(attempt);
            CasOutcome out = run(a, reads, keys, decide);
            boolean again = out == null ? a.failure == null || a.failure.isTransient()
                    || a.failure instanceof OutcomeUnknownException && !a.execSent : false;
            long pause = policy.backoffNanos(attempt);
            if (!again || attempt >= policy.maxAttempts() || System.nanoTime() + pause > deadline) {
                if (a.failure != null) {
                    throw a.failure instanceof OutcomeUnknownException u ? u.withRetrySafe(false) : a.failure;
                }
                return out == null ? new CasOutcome.Conflict(attempt) : out;
            }
            LockSupport.parkNanos(pause);
        }
    }

    private static final class CasAttempt {
        final int n;
        boolean execSent;
        RedisAtomicException failure;

        CasAttempt(int n) {
            this.n = n;
        }
    }

    /** One attempt: its outcome, or null after a conflict or a failure (then in {@code a.failure}). */
    private CasOutcome run(CasAttempt a, List<Read> reads, List<String> keys, Function<Snapshot, CasDecision> decide) {
        Link.Dedicated conn = null;
        boolean reusable = false;
        try {
            conn = take(keys.get(0));
            RedisCommands<byte[], byte[]> c = conn.conn().sync();
            c.watch(keys.stream().map(Cas::bytes).toArray(byte[][]::new));
            List<Object> values = new ArrayList<>();
            for (Read r : reads) {
                values.add(read(c, r));
            }
            CasDecision d = decide.apply(new Snapshot(java.util.Collections.unmodifiableList(values)));
            if (d.aborts()) {
                c.unwatch();
                reusable = true;
                return new CasOutcome.Aborted(a.n);
            }
            Write.checkBatch(d.writes());
            List<String> all = new ArrayList<>(keys);
            d.writes().forEach(w -> all.add(w.key()));
            Keyspace.requireSameSlot(all);
            c.multi();
            d.writes().forEach(w -> apply(c, w));
            a.execSent = true;
            TransactionResult r = c.exec();
            reusable = true;
            if (r.wasDiscarded()) {
                return null;
            }
            for (Object o : r) {
                if (o instanceof Exception e) {
                    throw Classify.failure(e);
                }
            }
            return new CasOutcome.Committed(a.n);
        } catch (io.lettuce.core.RedisException e) {
            a.failure = failed(e);
            return null;
        } finally {
            give(conn, reusable);
        }
    }

    /**
     * {@link MultiWrite#execute}: MULTI, the writes, EXEC on a connection of its own; every write is
     * idempotent, so a failure (an unknown outcome included) is sent again within the policy.
     */
    void multi(List<Write> writes, RetryPolicy retry) {
        Write.checkBatch(writes);
        long deadline = System.nanoTime() + retry.deadline().toNanos();
        for (int attempt = 1;; attempt++) {
            RedisAtomicException failure = multiOnce(writes);
            long pause = retry.backoffNanos(attempt);
            boolean again = failure != null && (failure.isTransient() || failure instanceof OutcomeUnknownException);
            if (!again || attempt >= retry.maxAttempts() || System.nanoTime() + pause > deadline) {
                if (failure != null) {
                    throw failure instanceof OutcomeUnknownException u ? u.withRetrySafe(true) : failure;
                }
                return;
            }
            LockSupport.parkNanos(pause);
        }
    }

    private RedisAtomicException multiOnce(List<Write> writes) {
        Link.Dedicated conn = null;
        boolean reusable = false;
        try {
            conn = take(writes.get(0).key());
            RedisCommands<byte[], byte[]> c = conn.conn().sync();
            c.multi();
            writes.forEach(w -> apply(c, w));
            TransactionResult r = c.exec();
            reusable = true;
            for (Object o : r) {
                if (o instanceof Exception e) {
                    return Classify.failure(e);
                }
            }
            return null;
        } catch (io.lettuce.core.RedisException e) {
            return failed(e);
        } finally {
            give(conn, reusable);
        }
    }

    private static Object read(RedisCommands<byte[], byte[]> c, Read r) {
        byte[] k = bytes(r.key());
        return switch (r.kind()) {
            case "get" -> c.get(k);
            case "hget" -> c.hget(k, bytes(r.field()));
            case "hgetall" -> c.hgetall(k);
            case "smembers" -> c.smembers(k);
            case "exists" -> c.exists(k);
            case "pttl" -> c.pttl(k);
            default -> throw new BadArgumentException("unknown read " + r.kind());
        };
    }

    private static void apply(RedisCommands<byte[], byte[]> c, Write w) {
        byte[] k = bytes(w.key());
        byte[][] args = w.args().toArray(byte[][]::new);
        switch (w.op()) {
            case "set" -> c.set(k, args[0], w.ttl() == null ? new SetArgs() : SetArgs.Builder.px(w.ttl().toMillis()));
            case "hset" -> {
                java.util.Map<byte[], byte[]> m = new java.util.LinkedHashMap<>();
                for (int i = 0; i < args.length; i += 2) {
                    m.put(args[i], args[i + 1]);
                }
                c.hset(k, m);
            }
            case "hdel" -> c.hdel(k, args);
            case "sadd" -> c.sadd(k, args);
            case "srem" -> c.srem(k, args);
            case "del" -> c.del(k);
            default -> c.pexpire(k, w.ttl().toMillis());
        }
    }

    /** A failure as the library's exception; after MOVED or ASK the slot map is learned again for the next attempt. */
    private RedisAtomicException failed(Throwable e) {
        RedisAtomicException out = Classify.failure(e);
        if (out instanceof RejectedException r && (r.serverCode().equals("MOVED") || r.serverCode().equals("ASK"))) {
            client.link().refreshTopology();
        }
        return out;
    }

    private Link.Dedicated take(String key) {
        Link.Dedicated c = idle.poll();
        while (c != null && !c.conn().isOpen()) {
            c = idle.poll();
        }
        return c != null ? c : client.link().dedicated(key);
    }

    private void give(Link.Dedicated c, boolean reusable) {
        if (c == null) {
            return;
        }
        if (reusable && c.poolable() && c.conn().isOpen() && idle.size() < MAX_IDLE) {
            idle.add(c);
        } else {
            c.close();
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
