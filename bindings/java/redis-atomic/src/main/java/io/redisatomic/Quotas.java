package io.redisatomic;

import io.redisatomic.scripts.QuotaAdd;
import io.redisatomic.scripts.QuotaAddId;
import io.redisatomic.scripts.QuotaMax;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Bounded counters: an add is applied only if the value stays within its {@link Bounds} (or is
 * clamped to them), atomically on the server. One key per counter, {@code <ns>:quota:v1:{name}};
 * with a request id, {@code ...:req:digest(id)} remembers the answer so a resend is not applied
 * twice. An add without a request id is not retry-safe (an unknown outcome is never resent).
 */
public final class Quotas {
    private static final int SCHEMA = 1;
    /** The largest magnitude of a value or delta (exact in a Lua number). */
    public static final long MAX_VALUE = (1L << 53) - 1;
    private static final int MAX_REQUEST_ID_LEN = 256;
    private final RedisAtomic client;
    private final Keyspace keyspace;
    private final Duration requestTtl;

    Quotas(RedisAtomic client, Keyspace keyspace, Duration requestTtl) {
        this.client = client;
        this.keyspace = keyspace;
        this.requestTtl = requestTtl;
    }

    /** With request ids remembered for {@code ttl} (1 s..=1 day; default 1 h). */
    public Quotas withRequestTtl(Duration ttl) {
        if (ttl.compareTo(Duration.ofSeconds(1)) < 0 || ttl.compareTo(Duration.ofDays(1)) > 0) {
            throw new BadArgumentException("request ttl must be 1 s ..= 1 day, got " + ttl);
        }
        return new Quotas(client, keyspace, ttl);
    }

    /** The inclusive range a counter's value must stay in. */
    public record Bounds(long min, long max) {
        public Bounds {
            if (min > max || min < -MAX_VALUE || max > MAX_VALUE) {
                throw new BadArgumentException("bounds must be -2^53+1 <= min <= max <= 2^53-1, got " + min + ".." + max);
            }
        }

        /** 0..=max. */
        public static Bounds upTo(long max) {
            return new Bounds(0, max);
        }
    }

    /** What an add answers: the value after it ({@link Applied}) or the unchanged one ({@link Refused}). */
    public sealed interface Bounded permits Bounded.Applied, Bounded.Refused {
        long value();

        record Applied(long value) implements Bounded {
        }

        record Refused(long value) implements Bounded {
        }
    }

    /** What a raise answers: {@link Raised} to the candidate, or {@link Kept} the larger value. */
    public sealed interface Raise permits Raise.Raised, Raise.Kept {
        long value();

        record Raised(long value) implements Raise {
        }

        record Kept(long value) implements Raise {
        }
    }

    /** The counter's key and, with a request id, its record. */
    public record QuotaKeys(String value, String request) {
    }

    public QuotaKeys keys(String name, String requestId) {
        String value = keyspace.key("quota", SCHEMA, name);
        return new QuotaKeys(value, requestId == null ? null
                : keyspace.key("quota", SCHEMA, name, "req", Keyspace.digest(requestId, MAX_REQUEST_ID_LEN, "request id")));
    }

    /** Adds {@code delta} if the result stays within {@code bounds}; {@code ttl} (null: none) set when the counter is created. */
    public Bounded add(String name, long delta, Bounds bounds, Duration ttl) {
        return RedisAtomic.join(addAsync(name, delta, bounds, ttl, "refuse", null));
    }

    /** The same, remembered under {@code requestId}: a resend answers the first result without adding again. */
    public Bounded addWithId(String name, long delta, Bounds bounds, Duration ttl, String requestId) {
        return RedisAtomic.join(addAsync(name, delta, bounds, ttl, "refuse", requestId));
    }

    /** Adds {@code delta}, clamping the result to {@code bounds}. */
    public Bounded addClamped(String name, long delta, Bounds bounds, Duration ttl) {
        return RedisAtomic.join(addAsync(name, delta, bounds, ttl, "clamp", null));
    }

    CompletableFuture<Bounded> addAsync(String name, long delta, Bounds bounds, Duration ttl, String mode, String requestId) {
        try {
            if (Math.abs(delta) > MAX_VALUE) {
                throw new BadArgumentException("delta must be within ±(2^53-1), got " + delta);
            }
            long ttlMs = ttl == null ? 0 : Durations.millis("ttl", ttl, Duration.ofDays(366));
            QuotaKeys k = keys(name, requestId);
            List<Object> args = new ArrayList<>(List.of(delta, bounds.min(), bounds.max(), mode, ttlMs));
            if (k.request() == null) {
                return client.runAsync(QuotaAdd.DEF, List.of(k.value()), args, false).thenApply(QuotaAdd::decode)
                        .thenApply(r -> r instanceof QuotaAdd.Reply.Applied a ? new Bounded.Applied(a.value())
                                : new Bounded.Refused(((QuotaAdd.Reply.Refused) r).value()));
            }
            args.add(requestTtl.toMillis());
            return client.runAsync(QuotaAddId.DEF, List.of(k.value(), k.request()), args, true).thenApply(QuotaAddId::decode)
                    .thenApply(r -> r instanceof QuotaAddId.Reply.Applied a ? new Bounded.Applied(a.value())
                            : new Bounded.Refused(((QuotaAddId.Reply.Refused) r).value()));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The counter's value (0 when it does not exist). */
    public long get(String name) {
        byte[] key = keys(name, null).value().getBytes(StandardCharsets.UTF_8);
        byte[] v = RedisAtomic.join(client.<byte[]>commandAsync(c -> c.get(key), true));
        try {
            return v == null ? 0 : Long.parseLong(new String(v, StandardCharsets.UTF_8));
        } catch (NumberFormatException e) {
            throw new WrongTypeException(name + " does not hold a counter");
        }
    }

    /** Raises the counter to {@code candidate} if that is larger (a high-water mark). */
    public Raise raise(String name, long candidate) {
        if (Math.abs(candidate) > MAX_VALUE) {
            throw new BadArgumentException("candidate must be within ±(2^53-1), got " + candidate);
        }
        QuotaMax.Reply r = QuotaMax.decode(client.run(QuotaMax.DEF, List.of(keys(name, null).value()), List.of(candidate)));
        return r instanceof QuotaMax.Reply.Raised raised ? new Raise.Raised(raised.value())
                : new Raise.Kept(((QuotaMax.Reply.Kept) r).value());
    }

    /** Sets the counter's TTL to {@code ttl} only if it has none (PEXPIRE NX): whether it was set. Retry-safe. */
    public boolean expireOnce(String name, Duration ttl) {
        return RedisAtomic.join(expireOnceAsync(name, ttl));
    }

    public CompletableFuture<Boolean> expireOnceAsync(String name, Duration ttl) {
        return pexpire(name, ttl, io.lettuce.core.ExpireArgs.Builder.nx());
    }

    /** Moves the counter's expiry to {@code ttl} from now only if that is later (PEXPIRE GT; a counter without a TTL is left alone). Retry-safe. */
    public boolean extendTtl(String name, Duration ttl) {
        return RedisAtomic.join(extendTtlAsync(name, ttl));
    }

    public CompletableFuture<Boolean> extendTtlAsync(String name, Duration ttl) {
        return pexpire(name, ttl, io.lettuce.core.ExpireArgs.Builder.gt());
    }

    private CompletableFuture<Boolean> pexpire(String name, Duration ttl, io.lettuce.core.ExpireArgs option) {
        try {
            long ms = Durations.millis("ttl", ttl, Duration.ofDays(366));
            byte[] key = keys(name, null).value().getBytes(StandardCharsets.UTF_8);
            return client.<Boolean>commandAsync(c -> c.pexpire(key, ms, option), true).thenApply(Boolean.TRUE::equals);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** One member of {@link #addUnlessSmaller} and its score (within ±(2^53-1)). */
    public record Scored(long score, byte[] member) {
        public Scored {
            if (Math.abs(score) > MAX_VALUE) {
                throw new BadArgumentException("score " + score + " beyond ±(2^53-1)");
            }
        }
    }

    /** Sets each member's score in the sorted set {@code set} unless that would lower it (ZADD GT CH, 1..=1000 entries): how many changed. Retry-safe. */
    public long addUnlessSmaller(String set, List<Scored> entries) {
        return RedisAtomic.join(addUnlessSmallerAsync(set, entries));
    }

    public CompletableFuture<Long> addUnlessSmallerAsync(String set, List<Scored> entries) {
        try {
            if (entries.isEmpty() || entries.size() > 1000) {
                throw new BadArgumentException("a batch has 1..=1000 entries, got " + entries.size());
            }
            byte[] key = keys(set, null).value().getBytes(StandardCharsets.UTF_8);
            @SuppressWarnings("unchecked")
            io.lettuce.core.ScoredValue<byte[]>[] values = entries.stream()
                    .map(e -> io.lettuce.core.ScoredValue.just((double) e.score(), e.member())).toArray(io.lettuce.core.ScoredValue[]::new);
            return client.<Long>commandAsync(c -> c.zadd(key, io.lettuce.core.ZAddArgs.Builder.gt().ch(), values), true);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
