package io.redisatomic;

import io.redisatomic.scripts.QueueDeadList;
import io.redisatomic.scripts.QueueDeadPurge;
import io.redisatomic.scripts.QueueDeadRequeue;
import io.redisatomic.scripts.QueueInspect;
import io.redisatomic.scripts.QueueReap;
import java.time.Duration;
import java.util.List;

/** The queue's administrative calls (inspect, reap, dead letters): kept apart so {@link Queue} stays the worker's API. */
final class QueueAdmin {
    private QueueAdmin() {
    }

    static Queue.DeadLetters deadLetters(RedisAtomic client, Queue.QueueKeys keys, long start, long count) {
        checkCount("count", count);
        QueueDeadList.Reply.Listed l = (QueueDeadList.Reply.Listed) QueueDeadList.decode(client.run(QueueDeadList.DEF,
                List.of(keys.dead(), keys.meta(), keys.errors()), List.of(start, count)));
        return new Queue.DeadLetters(l.total(), l.letters().stream()
                .map(x -> new Queue.DeadLetter(x.id(), x.deadAtMs(), x.deliveries(), x.error())).toList());
    }

    static Queue.Requeue requeueDead(RedisAtomic client, Queue.QueueKeys keys, String jobId, Duration delay) {
        Durations.requireNonNegative("delay", delay);
        if (delay.compareTo(Duration.ofDays(365)) > 0) {
            throw new BadArgumentException("delay must be 0..=365 days, got " + delay);
        }
        QueueDeadRequeue.Reply r = QueueDeadRequeue.decode(client.run(QueueDeadRequeue.DEF,
                List.of(keys.dead(), keys.due(), keys.meta(), keys.errors()), List.of(jobId, delay.toMillis())));
        return r instanceof QueueDeadRequeue.Reply.Requeued ? new Queue.Requeue.Requeued() : new Queue.Requeue.NotDead();
    }

    static Queue.Reaped reap(RedisAtomic client, Queue.QueueKeys keys, Queue.QueueConfig config, int limit) {
        checkCount("limit", limit);
        QueueReap.Reply.Reaped r = (QueueReap.Reply.Reaped) QueueReap.decode(client.run(QueueReap.DEF,
                List.of(keys.inflight(), keys.due(), keys.dead(), keys.meta(), keys.payload(), keys.errors()),
                List.of((long) limit, (long) config.maxDeliveries(), (long) config.maxDeadLetters(),
                        config.deadLetterRetention().toMillis())));
        return new Queue.Reaped(r.requeued(), r.dead());
    }

    static JobState inspect(RedisAtomic client, Queue.QueueKeys keys, String jobId) {
        QueueInspect.Reply r = QueueInspect.decode(client.run(QueueInspect.DEF,
                List.of(keys.due(), keys.inflight(), keys.meta(), keys.errors()), List.of(jobId)));
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

    static Queue.Purged purge(RedisAtomic client, Queue.QueueKeys keys, Duration olderThan, int limit) {
        Durations.requireNonNegative("older_than", olderThan);
        checkCount("limit", limit);
        QueueDeadPurge.Reply.Purged p = (QueueDeadPurge.Reply.Purged) QueueDeadPurge.decode(client.run(QueueDeadPurge.DEF,
                List.of(keys.dead(), keys.meta(), keys.payload(), keys.errors()), List.of(olderThan.toMillis(), (long) limit)));
        return new Queue.Purged(p.purged(), p.remaining());
    }

    private static void checkCount(String what, long n) {
        if (n < 1 || n > 1000) {
            throw new BadArgumentException(what + " must be 1..=1000, got " + n);
        }
    }
}
