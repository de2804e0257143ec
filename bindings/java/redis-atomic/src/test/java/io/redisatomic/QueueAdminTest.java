package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The queue's claim ids, extend, reap, inspect and dead-letter calls on a real server, counted in the queue's state. */
@RedisServer
class QueueAdminTest {
    private final RedisAtomic ra;

    QueueAdminTest(EmbeddedRedis server) {
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    @Test
    void aRepeatedClaimIdAnswersTheSameJobsWithoutLeasingMore() {
        Queue q = ra.queue("qa", "ids", Queue.QueueConfig.defaults().withClaimIdTtl(Duration.ofMinutes(5)));
        for (int i = 0; i < 5; i++) {
            q.enqueue("j" + i, new byte[] {(byte) i}, Duration.ZERO);
        }
        List<Job> first = ((Queue.Claim.Claimed) q.claimWithId("w", Duration.ofSeconds(30), 3, "claim-1")).jobs();
        List<Job> again = ((Queue.Claim.Claimed) q.claimWithId("w", Duration.ofSeconds(30), 3, "claim-1")).jobs();
        assertEquals(3, first.size());
        assertEquals(first.stream().map(j -> j.id() + "@" + j.fence()).toList(), again.stream().map(j -> j.id() + "@" + j.fence()).toList());
        assertEquals(new Queue.Stats(2, 0, 3, 0, 0, 0), q.stats(), "the repeat leased nothing more");
        assertTrue(first.get(0).ack());
        assertEquals(2, ((Queue.Claim.Claimed) q.claimWithId("w", Duration.ofSeconds(30), 3, "claim-1")).jobs().size(),
                "an acked job is left out of the repeat");
    }

    @Test
    void extendInspectReapAndPurge() {
        Queue q = ra.queue("qa", "admin", new Queue.QueueConfig(1, Duration.ofHours(1), 100, Duration.ofDays(1), 1024));
        assertInstanceOf(JobState.Unknown.class, q.inspect("a"));
        q.enqueue("a", new byte[0], Duration.ZERO);
        q.enqueue("b", new byte[0], Duration.ofHours(1));
        assertInstanceOf(JobState.Queued.class, q.inspect("b"));
        Job a = ((Queue.Claim.Claimed) q.claim("w", Duration.ofMillis(1), 1)).jobs().get(0);
        JobState running = q.inspect("a");
        assertTrue(running instanceof JobState.Running r && r.fence() == a.fence() && r.worker().equals("w"));
        assertEquals(new Lost(), q.extend("a", "w", a.fence() + 1, Duration.ofSeconds(30)), "another fence is not this lease");
        // the 1 ms lease has run out on the server's clock by the time a reap runs: it goes dead (one delivery)
        Queue.Reaped reaped = q.reap(10);
        for (int i = 0; i < 10_000 && reaped.dead() == 0 && q.inspect("a") instanceof JobState.Running; i++) {
            reaped = q.reap(10); // bounded: the server's clock passes 1 ms within a few round trips
        }
        assertEquals(new Queue.Reaped(0, 1), reaped);
        assertEquals(new Lost(), q.extend("a", "w", a.fence(), Duration.ofSeconds(30)), "a reaped lease cannot be extended");
        assertTrue(q.inspect("a") instanceof JobState.Dead d && d.error().contains("lease expired"));
        assertEquals(new Queue.Purged(0, 1), q.purgeDeadLetters(Duration.ofDays(1), 10), "younger than a day: kept");
        assertEquals(new Queue.Purged(1, 0), q.purgeDeadLetters(Duration.ZERO, 10));
        assertInstanceOf(JobState.Unknown.class, q.inspect("a"), "its record went with it");
        assertEquals(new Queue.Stats(0, 1, 0, 0, 0, 0), q.stats());
    }

    @Test
    void extendMovesALiveLease() {
        Queue q = ra.queue("qa", "extend", Queue.QueueConfig.defaults());
        q.enqueue("x", new byte[0], Duration.ZERO);
        Job x = ((Queue.Claim.Claimed) q.claim("w", Duration.ofSeconds(5), 1)).jobs().get(0);
        Extend e = q.extend("x", "w", x.fence(), Duration.ofMinutes(10));
        assertEquals(new Extend.Extended(x.fence(), Duration.ofMinutes(10)), e);
        assertTrue(q.inspect("x") instanceof JobState.Running r && r.ttl().compareTo(Duration.ofMinutes(9)) > 0);
    }
}
