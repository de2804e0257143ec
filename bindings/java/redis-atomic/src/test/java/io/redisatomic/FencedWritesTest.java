package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Fenced writes on a real server: a smaller fence never overwrites a larger one's data; a batch is all or none. */
@RedisServer
class FencedWritesTest {
    private final RedisAtomic ra;
    private final EmbeddedRedis server;

    FencedWritesTest(EmbeddedRedis server) {
        this.server = server;
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aStaleFenceWritesNothingAndTheNewerDataStays() {
        FencedWrites fw = ra.fencedWrites("fw");
        String doc = fw.key("order-1", "doc");
        String tags = fw.key("order-1", "tags");
        assertEquals(new FencedWrites.Fenced.Applied(10, 2),
                fw.write("order-1", 10, List.of(Write.set(doc, b("v10")), Write.sadd(tags, b("a")))));
        assertEquals(new FencedWrites.Fenced.Applied(12, 1), fw.write("order-1", 12, List.of(Write.set(doc, b("v12")))));
        FencedWrites.Fenced stale = fw.write("order-1", 11, List.of(Write.set(doc, b("v11")), Write.del(tags)));
        assertEquals(new FencedWrites.Fenced.Stale(12), stale);
        assertEquals("stale", stale.outcome());
        assertEquals(12, fw.highest("order-1"));
        assertEquals(0, fw.highest("order-2"));
        try (ServerStats s = new ServerStats(server.url())) {
            assertEquals("v12", s.redis().get(doc), "the newer holder's data stays");
            assertEquals(1, s.redis().scard(tags), "the stale batch's delete did not apply either");
            assertEquals("12", s.redis().get(fw.keys("order-1").fence()));
        }
        assertInstanceOf(FencedWrites.Fenced.Applied.class, fw.write("order-1", 12, List.of(Write.set(doc, b("again")))),
                "the same fence passes again (a resend)");
    }

    @Test
    void aBatchMeetingAWrongTypeAppliesNothing() {
        FencedWrites fw = ra.fencedWrites("fw").withRetention(Duration.ofMinutes(5));
        String a = fw.key("r", "a");
        String h = fw.key("r", "h");
        try (ServerStats s = new ServerStats(server.url())) {
            s.redis().set(h, "a string");
            assertThrows(WrongTypeException.class,
                    () -> fw.write("r", 5, List.of(Write.set(a, b("x")), Write.hset(h, Map.of("f", b("v"))))));
            assertEquals(0, s.redis().exists(a), "the first write of the refused batch did not apply");
            assertEquals(0, fw.highest("r"));
            fw.write("r", 5, List.of(Write.setPx(a, b("x"), Duration.ofMinutes(1)), Write.expire(h, Duration.ofMinutes(2))));
            long ttl = s.redis().pttl(fw.keys("r").fence());
            assertEquals(true, ttl > 60_000 && ttl <= 300_000, "the record is kept for the retention");
        }
    }

    @Test
    void keysOutsideTheResourceTagAndBadFencesAreRefusedBeforeSending() {
        FencedWrites fw = ra.fencedWrites("fw");
        assertThrows(BadArgumentException.class, () -> fw.write("r", 1, List.of(Write.set("plain", b("x")))));
        assertThrows(BadArgumentException.class, () -> fw.write("r", 1, List.of(Write.set("x{s}{r}", b("x")))));
        assertThrows(BadArgumentException.class, () -> fw.write("r", 0, List.of(Write.set(fw.key("r", "a"), b("x")))));
        assertThrows(BadArgumentException.class, () -> fw.write("r", 1, List.of()));
    }
}
