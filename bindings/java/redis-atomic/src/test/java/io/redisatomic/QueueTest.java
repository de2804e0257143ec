package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The job queue on a real server: concurrent workers ack every job once; failures become dead letters. */
@RedisServer
class QueueTest {
    private final RedisAtomic ra;

    QueueTest(EmbeddedRedis server) {
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    @Test
    void everyJobIsAckedOnceByConcurrentWorkers() throws Exception {
        Queue q = ra.queue("qt", "emails", Queue.QueueConfig.defaults());
        int jobs = 200;
        for (int i = 0; i < jobs; i++) {
            assertInstanceOf(Queue.Enqueue.Enqueued.class, q.enqueue("job-" + i, ("mail " + i).getBytes(StandardCharsets.UTF_8), Duration.ZERO));
        }
        assertInstanceOf(Queue.Enqueue.Exists.class, q.enqueue("job-0", new byte[0], Duration.ZERO));
        Map<String, AtomicInteger> acks = new ConcurrentHashMap<>();
        AtomicInteger total = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> workers = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            String worker = "worker-" + w;
            workers.add(pool.submit(() -> {
                for (int round = 0; round < 10_000 && total.get() < jobs; round++) {
                    if (q.claim(worker, Duration.ofSeconds(60), 7) instanceof Queue.Claim.Claimed c) {
                        for (Job j : c.jobs()) {
                            if (j.ack()) {
                                acks.computeIfAbsent(j.id(), k -> new AtomicInteger()).incrementAndGet();
                                total.incrementAndGet();
                            }
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : workers) {
            f.get();
        }
        pool.shutdown();
        assertEquals(jobs, acks.size());
        assertTrue(acks.values().stream().allMatch(n -> n.get() == 1), "every job acked once");
        assertEquals(new Queue.Stats(0, 0, 0, 0, 0, jobs), q.stats());
    }

    @Test
    void aJobOutOfDeliveriesIsADeadLetterAndCanBeRequeued() {
        Queue q = ra.queue("qt", "flaky", new Queue.QueueConfig(2, Duration.ofHours(1), 100, Duration.ofDays(1), 1024));
        q.enqueue("bad", new byte[] {1}, Duration.ZERO);
        Job first = ((Queue.Claim.Claimed) q.claim("w", Duration.ofSeconds(30), 1)).jobs().get(0);
        assertInstanceOf(Queue.Nack.Retrying.class, first.nack(Duration.ZERO, "boom"));
        Job second = ((Queue.Claim.Claimed) q.claim("w", Duration.ofSeconds(30), 1)).jobs().get(0);
        assertTrue(second.fence() > first.fence());
        assertEquals(2, second.deliveries());
        assertEquals(new Queue.Nack.Dead(), second.nack(Duration.ZERO, "boom again"));
        Queue.DeadLetters page = q.deadLetters(0, 10);
        List<Queue.DeadLetter> dead = page.letters();
        assertEquals(1, page.total());
        assertEquals(1, dead.size());
        assertEquals("bad", dead.get(0).id());
        assertEquals("boom again", dead.get(0).error());
        assertEquals(new Lost(), q.nack("bad", "w", second.fence(), Duration.ZERO, "late"), "a dead job's lease is gone");
        assertEquals(new Queue.Requeue.Requeued(), q.requeueDead("bad", Duration.ZERO));
        assertEquals(new Queue.Requeue.NotDead(), q.requeueDead("bad", Duration.ZERO), "a resend finds it no longer dead");
        assertInstanceOf(Queue.Claim.Claimed.class, q.claim("w", Duration.ofSeconds(30), 1));
    }
}
