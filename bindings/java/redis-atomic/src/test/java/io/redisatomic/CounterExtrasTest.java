package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Quota TTL calls, add-unless-smaller and dedup's batch on a real server, read back from the keys. */
@RedisServer
class CounterExtrasTest {
    private final RedisAtomic ra;
    private final EmbeddedRedis server;

    CounterExtrasTest(EmbeddedRedis server) {
        this.server = server;
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    @Test
    void expireOnceSetsATtlOnlyOnceAndExtendTtlOnlyMovesItForward() {
        Quotas q = ra.quotas("cx");
        q.add("c", 1, Quotas.Bounds.upTo(10), null);
        String key = q.keys("c", null).value();
        try (ServerStats s = new ServerStats(server.url())) {
            assertFalse(q.extendTtl("c", Duration.ofMinutes(5)), "no TTL yet: left alone");
            assertEquals(-1, s.redis().pttl(key));
            assertTrue(q.expireOnce("c", Duration.ofMinutes(5)));
            assertFalse(q.expireOnce("c", Duration.ofMinutes(50)), "it has one now");
            assertTrue(s.redis().pttl(key) <= 300_000);
            assertFalse(q.extendTtl("c", Duration.ofMinutes(1)), "never shortened");
            assertTrue(q.extendTtl("c", Duration.ofMinutes(10)));
            assertTrue(s.redis().pttl(key) > 300_000);
        }
    }

    @Test
    void addUnlessSmallerNeverLowersAScore() {
        Quotas q = ra.quotas("cx");
        byte[] a = "a".getBytes(StandardCharsets.UTF_8);
        byte[] b = "b".getBytes(StandardCharsets.UTF_8);
        assertEquals(2, q.addUnlessSmaller("hw", List.of(new Quotas.Scored(5, a), new Quotas.Scored(7, b))));
        assertEquals(1, q.addUnlessSmaller("hw", List.of(new Quotas.Scored(3, a), new Quotas.Scored(9, b))));
        try (ServerStats s = new ServerStats(server.url())) {
            String key = q.keys("hw", null).value();
            assertEquals(5.0, s.redis().zscore(key, "a"));
            assertEquals(9.0, s.redis().zscore(key, "b"));
        }
    }

    @Test
    void firstSeenManyIsTrueOncePerIdEvenWithinABatch() {
        Dedup d = ra.dedup("cx");
        assertTrue(d.firstSeen("e1", Duration.ofMinutes(1)));
        List<Boolean> seen = d.firstSeenMany(List.of("e1", "e2", "e3", "e2"), Duration.ofMinutes(1));
        assertEquals(List.of(false, true, true, false), seen);
        assertEquals(List.of(false, false), d.firstSeenMany(List.of("e2", "e3"), Duration.ofMinutes(1)));
    }
}
