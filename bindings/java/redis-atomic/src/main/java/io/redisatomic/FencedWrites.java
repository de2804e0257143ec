package io.redisatomic;

import io.redisatomic.scripts.FencedWrite;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Writes to state in Redis applied only for a fence at least the highest that wrote: once a write
 * with fence f has applied to a resource, no write with a smaller fence applies to it again
 * (within the fence record's retention). A paused holder past its lease gets {@link Fenced.Stale}
 * and the newer holder's data stays.
 *
 * <p>Keys ({@link #keys}): {@code <ns>:fenced:v1:{resource}:fence} holds the highest fence that
 * wrote; every target key must carry the {@code {resource}} tag ({@link #key} builds such keys).
 * Mechanism: one script, {@code fenced_write}: compare, apply the batch, record the fence,
 * atomically; the whole batch is checked before the first write. Retry-safe: every write is
 * idempotent and only the same fence can pass twice, so an unknown outcome is resent.
 *
 * <p>Not guaranteed: a stale holder writing before the newer holder's first write still applies;
 * reads are not fenced; after the retention without writes any fence is accepted again.
 */
public final class FencedWrites {
    private static final int SCHEMA = 1;
    /** The largest fence a write may carry (2^53 - 1: exact in Lua). */
    public static final long MAX_FENCE = (1L << 53) - 1;
    private static final Duration MAX_RETENTION = Duration.ofDays(365);
    private final RedisAtomic client;
    private final Keyspace keyspace;
    private final Duration retention;

    FencedWrites(RedisAtomic client, Keyspace keyspace, Duration retention) {
        this.client = client;
        this.keyspace = keyspace;
        this.retention = retention;
    }

    /** Keeps the fence record {@code retention} (1 ms..=365 days; default 7 days) after the last write. */
    public FencedWrites withRetention(Duration retention) {
        Durations.millis("retention", retention, MAX_RETENTION);
        return new FencedWrites(client, keyspace, retention);
    }

    /** A resource's fence record. */
    public record FencedKeys(String fence) {
    }

    public FencedKeys keys(String resource) {
        return new FencedKeys(keyspace.key("fenced", SCHEMA, resource, "fence"));
    }

    /** A data key of {@code resource} ({@code <ns>:fenced:v1:{resource}:data:<part>}), in its slot. */
    public String key(String resource, String part) {
        return keyspace.key("fenced", SCHEMA, resource, "data", part);
    }

    /** What a fenced write answers: {@link Applied} or {@link Stale}. */
    public sealed interface Fenced permits Fenced.Applied, Fenced.Stale {
        /** The outcome word: {@code applied} or {@code stale}. */
        String outcome();

        /** The fence was at least the highest: {@code writes} writes applied, {@code fence} is now the highest. */
        record Applied(long fence, int writes) implements Fenced {
            @Override
            public String outcome() {
                return "applied";
            }
        }

        /** A larger fence ({@code highest}) already wrote: nothing changed. */
        record Stale(long highest) implements Fenced {
            @Override
            public String outcome() {
                return "stale";
            }
        }
    }

    /** Applies {@code writes} (1..=64, every key carrying {@code {resource}}) if {@code fence} is at least the highest, all or none. */
    public Fenced write(String resource, long fence, List<Write> writes) {
        return RedisAtomic.join(writeAsync(resource, fence, writes));
    }

    public CompletableFuture<Fenced> writeAsync(String resource, long fence, List<Write> writes) {
        try {
            if (fence < 1 || fence > MAX_FENCE) {
                throw new BadArgumentException("fence must be in 1..=" + MAX_FENCE + ", got " + fence);
            }
            Write.checkBatch(writes);
            List<String> keys = new ArrayList<>(List.of(keys(resource).fence()));
            List<Object> args = new ArrayList<>(List.of(fence, retention.toMillis()));
            for (Write w : writes) {
                if (!resource.equals(tag(w.key()))) {
                    throw new BadArgumentException("every key of a fenced write must carry the tag {" + resource + "}");
                }
                List<Object> a = w.commandArgs();
                keys.add(w.key());
                args.add(w.op());
                args.add((long) a.size());
                args.addAll(a);
            }
            return client.runAsync(FencedWrite.DEF, keys, args, true).thenApply(FencedWrite::decode)
                    .thenApply(r -> r instanceof FencedWrite.Reply.Applied a ? new Fenced.Applied(a.fence(), (int) a.writes())
                            : new Fenced.Stale(((FencedWrite.Reply.Stale) r).highest()));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The part of {@code key} that decides its slot: between the first '{' and the next '}' when non-empty. */
    private static String tag(String key) {
        int open = key.indexOf('{');
        int close = open < 0 ? -1 : key.indexOf('}', open + 1);
        return close > open + 1 ? key.substring(open + 1, close) : key;
    }

    /** The highest fence that wrote to {@code resource} (0 if none is remembered): one GET, retried as any read. */
    public long highest(String resource) {
        byte[] key = keys(resource).fence().getBytes(StandardCharsets.UTF_8);
        byte[] v = RedisAtomic.join(client.<byte[]>commandAsync(c -> c.get(key), true));
        try {
            return v == null ? 0 : Long.parseLong(new String(v, StandardCharsets.UTF_8));
        } catch (NumberFormatException e) {
            throw new WrongTypeException("the fence record of " + resource + " does not hold a fence");
        }
    }
}
