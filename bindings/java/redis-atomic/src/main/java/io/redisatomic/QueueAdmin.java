package io.redisatomic;

import io.redisatomic.scripts.QueueDeadList;
import io.redisatomic.scripts.QueueDeadPurge;
import io.redisatomic.scripts.QueueDeadRequeue;
import io.redisatomic.scripts.QueueInspect;
import io.redisatomic.scripts.QueueReap;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The queue's administrative calls (inspect, reap, dead letters), asynchronous (the queue's
 * blocking methods join them): kept apart so {@link Queue} stays the worker's API. Every one is
 * retry-safe, as its script's header says.
 */
final class QueueAdmin {
    private QueueAdmin() {
    }

    /** Runs a retry-safe admin script (arguments checked before: a refusal fails the future). */
    private static CompletableFuture<Object> run(RedisAtomic client, io.redisatomic.scripts.ScriptDef def, List<String> keys,
            java.util.function.Supplier<List<Object>> args) {
        try {
            return client.runAsync(def, keys, args.get(), def.retrySafe());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    static CompletableFuture<Queue.DeadLetters> deadLetters(RedisAtomic client, Queue.QueueKeys keys, long start, long count) {
        return run(client, QueueDeadList.DEF, List.of(keys.dead(), keys.meta(), keys.errors()), () -> {
            checkCount("count", count);
            return List.of(start, count);
        }).thenApply(raw -> {
            QueueDeadList.Reply.Listed l = (QueueDeadList.Reply.Listed) QueueDeadList.decode(raw);
            return new Queue.DeadLetters(l.total(), l.letters().stream()
                    .map(x -> new Queue.DeadLetter(x.id(), x.deadAtMs(), x.deliveries(), x.error())).toList());
        });
    }

    static CompletableFuture<Queue.Requeue> requeueDead(RedisAtomic client, Queue.QueueKeys keys, String jobId, Duration delay) {
        return run(client, QueueDeadRequeue.DEF, List.of(keys.dead(), keys.due(), keys.meta(), keys.errors()), () -> {
            Queue.checkId(jobId);
            Durations.requireNonNegative("delay", delay);
            if (delay.compareTo(Duration.ofDays(365)) > 0) {
                throw new BadArgumentException("delay must be 0..=365 days, got " + delay);
            }
            return List.of(jobId, delay.toMillis());
        }).thenApply(raw -> QueueDeadRequeue.decode(raw) instanceof QueueDeadRequeue.Reply.Requeued
                ? new Queue.Requeue.Requeued() : new Queue.Requeue.NotDead());
    }

    static CompletableFuture<Queue.Reaped> reap(RedisAtomic client, Queue.QueueKeys keys, Queue.QueueConfig config, int limit) {
        return run(client, QueueReap.DEF, List.of(keys.inflight(), keys.due(), keys.dead(), keys.meta(), keys.payload(),
                keys.errors()), () -> {
                    checkCount("limit", limit);
                    return List.of((long) limit, (long) config.maxDeliveries(), (long) config.maxDeadLetters(),
                            config.deadLetterRetention().toMillis());
                }).thenApply(raw -> {
                    QueueReap.Reply.Reaped r = (QueueReap.Reply.Reaped) QueueReap.decode(raw);
                    return new Queue.Reaped(r.requeued(), r.dead());
                });
    }

    static CompletableFuture<JobState> inspect(RedisAtomic client, Queue.QueueKeys keys, String jobId) {
        return run(client, QueueInspect.DEF, List.of(keys.due(), keys.inflight(), keys.meta(), keys.errors()), () -> {
            Queue.checkId(jobId);
            return List.of(jobId);
        }).thenApply(raw -> state(QueueInspect.decode(raw)));
    }

    private static JobState state(QueueInspect.Reply r) {
        if (r instanceof QueueInspect.Reply.Queued q) {
            return new JobState.Queued(Duration.ofMillis(q.dueInMs()), q.deliveries(), q.lastFence());
        }
        if (r instanceof QueueInspect.Reply.Running x) {
            return new JobState.Running(x.fence(), x.deliveries(), Duration.ofMillis(x.ttlMs()), x.worker());
        }
        if (r instanceof QueueInspect.Reply.Dead d) {
            return new JobState.Dead(d.deliveries(), d.error());
        }
        return r instanceof QueueInspect.Reply.Acked a ? new JobState.Acked(a.fence()) : new JobState.Unknown();
    }

    static CompletableFuture<Queue.Purged> purge(RedisAtomic client, Queue.QueueKeys keys, Duration olderThan, int limit) {
        return run(client, QueueDeadPurge.DEF, List.of(keys.dead(), keys.meta(), keys.payload(), keys.errors()), () -> {
            Durations.requireNonNegative("older_than", olderThan);
            checkCount("limit", limit);
            return List.of(olderThan.toMillis(), (long) limit);
        }).thenApply(raw -> {
            QueueDeadPurge.Reply.Purged p = (QueueDeadPurge.Reply.Purged) QueueDeadPurge.decode(raw);
            return new Queue.Purged(p.purged(), p.remaining());
        });
    }

    private static void checkCount(String what, long n) {
        if (n < 1 || n > 1000) {
            throw new BadArgumentException(what + " must be 1..=1000, got " + n);
        }
    }
}
