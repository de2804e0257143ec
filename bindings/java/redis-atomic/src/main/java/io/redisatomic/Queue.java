package io.redisatomic;

import io.redisatomic.scripts.QueueAck;
import io.redisatomic.scripts.QueueClaim;
import io.redisatomic.scripts.QueueClaimId;
import io.redisatomic.scripts.QueueEnqueue;
import io.redisatomic.scripts.QueueExtend;
import io.redisatomic.scripts.QueueNack;
import io.redisatomic.scripts.QueueStats;
import java.time.Duration;
import java.util.List;

/**
 * A job queue with leases and dead letters, on the server's clock. Invariant: a job is held by at
 * most one worker at a time (a lease with a fence), is acked at most once, and after
 * {@code maxDeliveries} failed or expired deliveries becomes a dead letter.
 *
 * <p>Keys (one hash tag, so one slot): {@code <ns>:queue:v1:{name}:due} (id → due ms),
 * {@code :inflight} (id → lease end), {@code :dead}, {@code :done} (ack tombstones for the dedup
 * window), {@code :meta}, {@code :payload}, {@code :errors}, {@code :claim}.
 *
 * <p>Retries: {@code enqueue} (an id enqueues once within the dedup window), {@code ack},
 * {@code nack}, {@code extend}, {@code claimWithId}, {@code reap}, {@code inspect} and the
 * dead-letter calls are retry-safe; {@code claim} is not (a resend could lease more jobs; they
 * come back when their leases run out).
 */
public final class Queue {
    private static final int SCHEMA = 1;
    private final RedisAtomic client;
    private final String name;
    private final QueueKeys keys;
    private final QueueConfig config;

    Queue(RedisAtomic client, Keyspace keyspace, String name, QueueConfig config) {
        this.client = client;
        this.name = name;
        this.config = config;
        String base = keyspace.key("queue", SCHEMA, name, "due");
        String prefix = base.substring(0, base.length() - "due".length());
        this.keys = new QueueKeys(prefix + "due", prefix + "inflight", prefix + "dead", prefix + "done",
                prefix + "meta", prefix + "payload", prefix + "errors", prefix + "claim");
    }

    /** The queue's keys. */
    public record QueueKeys(String due, String inflight, String dead, String done, String meta, String payload,
            String errors, String claims) {
    }

    /**
     * Settings: deliveries before a job is dead, how long an acked id is remembered (a duplicate
     * enqueue is refused meanwhile), how many dead letters are kept and for how long, the largest payload.
     */
    public record QueueConfig(int maxDeliveries, Duration dedupWindow, int maxDeadLetters, Duration deadLetterRetention,
            int maxPayloadBytes, Duration claimIdTtl) {
        /** With claim ids remembered 1 h. */
        public QueueConfig(int maxDeliveries, Duration dedupWindow, int maxDeadLetters, Duration deadLetterRetention, int maxPayloadBytes) {
            this(maxDeliveries, dedupWindow, maxDeadLetters, deadLetterRetention, maxPayloadBytes, Duration.ofHours(1));
        }

        public QueueConfig {
            if (claimIdTtl == null || claimIdTtl.compareTo(Duration.ofSeconds(1)) < 0 || claimIdTtl.compareTo(Duration.ofDays(1)) > 0) {
                throw new BadArgumentException("claim_id_ttl must be 1 s ..= a day, got " + claimIdTtl);
            }
            if (maxDeliveries < 1 || maxDeadLetters < 1 || maxPayloadBytes < 0 || maxPayloadBytes > 1 << 20) {
                throw new BadArgumentException("maxDeliveries and maxDeadLetters must be at least 1, maxPayloadBytes 0..1 MiB");
            }
            Durations.millis("dead_letter_retention", deadLetterRetention, Duration.ofDays(365));
            Durations.requireNonNegative("dedup_window", dedupWindow);
        }

        /** How long a claim id's record answers repeats (1 s..=24 h). */
        public QueueConfig withClaimIdTtl(Duration ttl) {
            return new QueueConfig(maxDeliveries, dedupWindow, maxDeadLetters, deadLetterRetention, maxPayloadBytes, ttl);
        }

        /** 5 deliveries, a 24 h dedup window, 10 000 dead letters kept 7 days, 64 KiB payloads, claim ids kept 1 h. */
        public static QueueConfig defaults() {
            return new QueueConfig(5, Duration.ofHours(24), 10_000, Duration.ofDays(7), 64 * 1024);
        }
    }

    public QueueKeys keys() {
        return keys;
    }

    /** The record of a claim id ({@code :claim:digest(claim id)}), where a claim with that id is remembered. */
    public String claimKey(String claimId) {
        return keys.claims() + ":" + Keyspace.digest(claimId, 256, "claim id");
    }

    public String name() {
        return name;
    }

    /** What enqueue answers: {@link Enqueued} or {@link Exists} (the id is queued, running, dead or acked). */
    public sealed interface Enqueue permits Enqueue.Enqueued, Enqueue.Exists {
        record Enqueued(Duration dueIn) implements Enqueue {
        }

        record Exists(String status) implements Enqueue {
        }
    }

    /** Enqueues {@code jobId} with {@code payload}, due after {@code delay} (zero: now). */
    public Enqueue enqueue(String jobId, byte[] payload, Duration delay) {
        checkId(jobId);
        if (payload.length > config.maxPayloadBytes()) {
            throw new BadArgumentException("payload is " + payload.length + " bytes, over the " + config.maxPayloadBytes() + "-byte limit");
        }
        Durations.requireNonNegative("delay", delay);
        Object raw = client.run(QueueEnqueue.DEF, List.of(keys.due(), keys.meta(), keys.payload()),
                List.of(jobId, payload, delay.toMillis(), 0L));
        QueueEnqueue.Reply r = QueueEnqueue.decode(raw);
        return r instanceof QueueEnqueue.Reply.Enqueued e ? new Enqueue.Enqueued(Duration.ofMillis(e.dueInMs()))
                : new Enqueue.Exists(((QueueEnqueue.Reply.Exists) r).status());
    }

    /** What claim answers: the leased {@link Job}s, {@link Empty} (the next is due in retryAfter), or {@link Idle}. */
    public sealed interface Claim permits Claim.Claimed, Claim.Empty, Claim.Idle {
        record Claimed(List<Job> jobs) implements Claim {
        }

        record Empty(Duration retryAfter) implements Claim {
        }

        record Idle() implements Claim {
        }
    }

    /** Leases up to {@code maxJobs} due jobs to {@code worker} for {@code ttl}. Not retry-safe. */
    public Claim claim(String worker, Duration ttl, int maxJobs) {
        long ttlMs = checkClaim(worker, ttl, maxJobs);
        Object raw = client.run(QueueClaim.DEF, List.of(keys.due(), keys.inflight(), keys.dead(), keys.meta(),
                keys.payload(), keys.errors()), List.of(worker, ttlMs, (long) maxJobs, (long) config.maxDeliveries(),
                (long) config.maxDeadLetters(), config.deadLetterRetention().toMillis()));
        QueueClaim.Reply r = QueueClaim.decode(raw);
        if (r instanceof QueueClaim.Reply.Claimed c) {
            long sent = System.nanoTime();
            return new Claim.Claimed(c.jobs().stream().map(j -> new Job(this, j.id(), j.payload(), j.deliveries(),
                    c.nowMs(), worker, j.fence(), ttl, sent)).toList());
        }
        return r instanceof QueueClaim.Reply.Empty e ? new Claim.Empty(Duration.ofMillis(e.retryAfterMs())) : new Claim.Idle();
    }

    /**
     * The same with a claim id: the leases are recorded ({@link #claimKey}) for
     * {@code claimIdTtl}, and a resend with the id answers the jobs of the first claim still leased
     * to it (same fences) instead of claiming again. Retry-safe, so resent after an unknown outcome.
     */
    public Claim claimWithId(String worker, Duration ttl, int maxJobs, String claimId) {
        long ttlMs = checkClaim(worker, ttl, maxJobs);
        long sent = System.nanoTime();
        Object raw = client.run(QueueClaimId.DEF, List.of(keys.due(), keys.inflight(), keys.dead(), keys.meta(),
                keys.payload(), keys.errors(), claimKey(claimId)), List.of(worker, ttlMs, (long) maxJobs,
                (long) config.maxDeliveries(), (long) config.maxDeadLetters(), config.deadLetterRetention().toMillis(),
                config.claimIdTtl().toMillis()));
        QueueClaimId.Reply r = QueueClaimId.decode(raw);
        if (r instanceof QueueClaimId.Reply.Claimed c) {
            return new Claim.Claimed(c.jobs().stream().map(j -> new Job(this, j.id(), j.payload(), j.deliveries(),
                    c.nowMs(), worker, j.fence(), Duration.ofMillis(j.ttlMs()), sent)).toList());
        }
        return r instanceof QueueClaimId.Reply.Empty e ? new Claim.Empty(Duration.ofMillis(e.retryAfterMs())) : new Claim.Idle();
    }

    private static long checkClaim(String worker, Duration ttl, int maxJobs) {
        Tokens.check(worker);
        if (worker.length() > 128 || maxJobs < 1 || maxJobs > 1000) {
            throw new BadArgumentException("worker must be 1..=128 bytes and maxJobs 1..=1000");
        }
        return Durations.millis("ttl", ttl, Duration.ofHours(24));
    }

    /** Acks the job (token = its worker, fence = its lease's): {@code acked} once, then {@link Lost}. */
    public boolean ack(String jobId, String token, long fence) {
        Object raw = client.run(QueueAck.DEF, List.of(keys.inflight(), keys.meta(), keys.payload(), keys.errors(), keys.done()),
                List.of(jobId, Tokens.check(token), Long.toUnsignedString(fence), config.dedupWindow().toMillis()));
        return QueueAck.decode(raw) instanceof QueueAck.Reply.Acked;
    }

    /** What nack answers: retrying after a delay, dead (out of deliveries), or lost (not this lease's). */
    public sealed interface Nack permits Nack.Retrying, Nack.Dead, Lost {
        record Retrying(Duration retryAfter) implements Nack {
        }

        record Dead() implements Nack {
        }
    }

    /** Gives the job back: due again after {@code retryAfter}, or dead after its last delivery. */
    public Nack nack(String jobId, String token, long fence, Duration retryAfter, String error) {
        Durations.requireNonNegative("retry_after", retryAfter);
        Object raw = client.run(QueueNack.DEF, List.of(keys.inflight(), keys.due(), keys.dead(), keys.meta(),
                keys.payload(), keys.errors()), List.of(jobId, Tokens.check(token), Long.toUnsignedString(fence),
                retryAfter.toMillis(), (long) config.maxDeliveries(), error == null ? "" : error,
                (long) config.maxDeadLetters(), config.deadLetterRetention().toMillis()));
        QueueNack.Reply r = QueueNack.decode(raw);
        if (r instanceof QueueNack.Reply.Retrying x) {
            return new Nack.Retrying(Duration.ofMillis(x.retryAfterMs()));
        }
        return r instanceof QueueNack.Reply.Dead ? new Nack.Dead() : new Lost();
    }

    /** Sets the lease (named by {@code token} and {@code fence}) to end {@code ttl} from the server's now: {@link Extend.Extended} or {@link Lost}. */
    public Extend extend(String jobId, String token, long fence, Duration ttl) {
        return RedisAtomic.join(extendAsync(jobId, token, fence, ttl));
    }

    public java.util.concurrent.CompletableFuture<Extend> extendAsync(String jobId, String token, long fence, Duration ttl) {
        try {
            return client.runAsync(QueueExtend.DEF, List.of(keys.inflight(), keys.meta()), List.of(jobId, Tokens.check(token),
                    Long.toUnsignedString(fence), Durations.millis("ttl", ttl, Duration.ofHours(24))), true)
                    .thenApply(raw -> QueueExtend.decode(raw) instanceof QueueExtend.Reply.Extended e
                            ? new Extend.Extended(e.fence(), Duration.ofMillis(e.ttlMs())) : new Lost());
        } catch (RuntimeException e) {
            return java.util.concurrent.CompletableFuture.failedFuture(e);
        }
    }

    /** Counts of jobs by state. */
    public record Stats(long ready, long scheduled, long running, long expired, long dead, long acked) {
    }

    public Stats stats() {
        QueueStats.Reply.Stats s = (QueueStats.Reply.Stats) QueueStats.decode(client.run(QueueStats.DEF,
                List.of(keys.due(), keys.inflight(), keys.dead(), keys.done()), List.of()));
        return new Stats(s.ready(), s.scheduled(), s.running(), s.expired(), s.dead(), s.acked());
    }

    /** One dead letter: its id, when it died (server ms), its deliveries and last error. */
    public record DeadLetter(String id, long deadAtMs, long deliveries, String error) {
    }

    /** A page of dead letters (oldest first) and how many there are. */
    public record DeadLetters(long total, List<DeadLetter> letters) {
    }

    /** Up to {@code count} dead letters from {@code start} (oldest first), and how many there are. */
    public DeadLetters deadLetters(long start, long count) {
        return RedisAtomic.join(deadLettersAsync(start, count));
    }

    public java.util.concurrent.CompletableFuture<DeadLetters> deadLettersAsync(long start, long count) {
        return QueueAdmin.deadLetters(client, keys, start, count);
    }

    /** What requeueDead answers: {@link Requeued} (due again) or {@link NotDead}. */
    public sealed interface Requeue permits Requeue.Requeued, Requeue.NotDead {
        String outcome();

        record Requeued() implements Requeue {
            @Override
            public String outcome() {
                return "requeued";
            }
        }

        record NotDead() implements Requeue {
            @Override
            public String outcome() {
                return "not_dead";
            }
        }
    }

    /** Puts a dead letter back in the queue after {@code delay}, its deliveries reset. Retry-safe. */
    public Requeue requeueDead(String jobId, Duration delay) {
        return RedisAtomic.join(requeueDeadAsync(jobId, delay));
    }

    public java.util.concurrent.CompletableFuture<Requeue> requeueDeadAsync(String jobId, Duration delay) {
        return QueueAdmin.requeueDead(client, keys, jobId, delay);
    }

    /** Expired leases returned: to the queue ({@code requeued}) or to the dead letters ({@code dead}). */
    public record Reaped(long requeued, long dead) {
    }

    /** Returns at most {@code limit} (1..=1000) expired leases to the queue, or the dead letters after the last delivery. Retry-safe. */
    public Reaped reap(int limit) {
        return RedisAtomic.join(reapAsync(limit));
    }

    public java.util.concurrent.CompletableFuture<Reaped> reapAsync(int limit) {
        return QueueAdmin.reap(client, keys, config, limit);
    }

    /** One job's state, read without changing it. */
    public JobState inspect(String jobId) {
        return RedisAtomic.join(inspectAsync(jobId));
    }

    public java.util.concurrent.CompletableFuture<JobState> inspectAsync(String jobId) {
        return QueueAdmin.inspect(client, keys, jobId);
    }

    /** Dead letters deleted, and how many are left. */
    public record Purged(long purged, long remaining) {
    }

    /** Deletes at most {@code limit} (1..=1000) dead letters that died {@code olderThan} or longer ago (oldest first). Retry-safe. */
    public Purged purgeDeadLetters(Duration olderThan, int limit) {
        return RedisAtomic.join(purgeDeadLettersAsync(olderThan, limit));
    }

    public java.util.concurrent.CompletableFuture<Purged> purgeDeadLettersAsync(Duration olderThan, int limit) {
        return QueueAdmin.purge(client, keys, olderThan, limit);
    }

    static void checkId(String id) {
        if (id == null || id.isEmpty() || Keyspace.utf8Length(id) > 256) {
            throw new BadArgumentException("job id must be 1..=256 bytes");
        }
    }
}
