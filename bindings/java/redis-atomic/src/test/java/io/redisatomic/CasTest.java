package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.KillArgs;
import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Optimistic CAS on a real server: no lost update under concurrency; never resent once EXEC was sent. */
@RedisServer
class CasTest {
    private final RedisAtomic ra;
    private final EmbeddedRedis server;

    CasTest(EmbeddedRedis server) {
        this.server = server;
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    private static Cas.CasDecision increment(Cas.Snapshot s, String key) {
        String v = s.string(0);
        long next = (v == null ? 0 : Long.parseLong(v)) + 1;
        return Cas.CasDecision.commit(List.of(Write.set(key, Long.toString(next).getBytes(StandardCharsets.UTF_8))));
    }

    @Test
    void concurrentIncrementsLoseNoUpdate() throws Exception {
        Cas cas = ra.cas().withPolicy(new RetryPolicy(64, Duration.ofSeconds(30), Duration.ZERO, Duration.ofMillis(2)));
        String key = "cas:{c}:counter";
        AtomicInteger committed = new AtomicInteger();
        AtomicInteger conflicts = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            done.add(pool.submit(() -> {
                for (int i = 0; i < 25; i++) {
                    Cas.CasOutcome o = cas.update(List.of(Cas.Read.get(key)), s -> increment(s, key));
                    (o instanceof Cas.CasOutcome.Committed ? committed : conflicts).incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        try (ServerStats s = new ServerStats(server.url())) {
            assertEquals(committed.get(), Long.parseLong(s.redis().get(key)), "every commit counted once, none lost");
        }
        assertEquals(200, committed.get() + conflicts.get());
        assertTrue(committed.get() > 0);
    }

    @Test
    void anAbortWritesNothingAndAConflictRunsTheUpdateAgain() {
        Cas cas = ra.cas();
        String key = "cas:{a}:v";
        try (ServerStats s = new ServerStats(server.url())) {
            s.redis().set(key, "1");
            Cas.CasOutcome aborted = cas.update(List.of(Cas.Read.get(key), Cas.Read.exists(key)), snap -> {
                s.redis().set(key, "changed meanwhile");
                return Cas.CasDecision.abort();
            });
            assertEquals(new Cas.CasOutcome.Aborted(1), aborted);
            AtomicInteger runs = new AtomicInteger();
            Cas.CasOutcome o = cas.update(List.of(Cas.Read.get(key)), snap -> {
                if (runs.incrementAndGet() == 1) {
                    s.redis().set(key, "changed between the read and EXEC");
                }
                return Cas.CasDecision.commit(List.of(Write.set(key, ("after " + snap.string(0)).getBytes(StandardCharsets.UTF_8))));
            });
            assertEquals(new Cas.CasOutcome.Committed(2), o);
            assertEquals("after changed between the read and EXEC", s.redis().get(key), "the second attempt read the new value");
        }
        Cas.CasOutcome conflict = ra.cas().withPolicy(new RetryPolicy(3, Duration.ofSeconds(5), Duration.ZERO, Duration.ZERO))
                .update(List.of(Cas.Read.get(key)), snap -> {
                    try (ServerStats s = new ServerStats(server.url())) {
                        s.redis().incr("cas:{a}:other");
                        s.redis().set(key, "always changing " + s.redis().get("cas:{a}:other"));
                    }
                    return Cas.CasDecision.commit(List.of(Write.del(key)));
                });
        assertEquals(new Cas.CasOutcome.Conflict(3), conflict);
    }

    @Test
    void aLostExecReplyIsUnknownAndNeverResent() throws Exception {
        try (Proxy proxy = new Proxy(server.port()); RedisAtomic viaProxy = RedisAtomic.connect(proxy.url());
                ServerStats s = new ServerStats(server.url())) {
            String key = "cas:{x}:n";
            s.redis().set(key, "41");
            s.resetStats();
            OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class,
                    () -> viaProxy.cas().update(List.of(Cas.Read.get(key)), snap -> {
                        proxy.dropExecReply();
                        return increment(snap, key);
                    }));
            assertFalse(e.retrySafe());
            assertEquals(1, s.calls("exec"), "EXEC was sent once, not resent");
            assertEquals("42", s.redis().get(key), "the transaction ran once");
        }
    }

    @Test
    void aMultiWriteAppliesEveryWriteAndIsResentAfterALostReply() throws Exception {
        try (Proxy proxy = new Proxy(server.port()); RedisAtomic viaProxy = RedisAtomic.connect(proxy.url());
                ServerStats s = new ServerStats(server.url())) {
            MultiWrite batch = MultiWrite.of(Write.set("mw:{m}:a", "1".getBytes(StandardCharsets.UTF_8)),
                    Write.sadd("mw:{m}:s", "x".getBytes(StandardCharsets.UTF_8)), Write.expire("mw:{m}:s", Duration.ofMinutes(5)));
            s.resetStats();
            proxy.dropExecReply();
            batch.execute(viaProxy);
            assertEquals(2, s.calls("exec"), "the lost EXEC was sent again: the writes are idempotent");
            assertEquals("1", s.redis().get("mw:{m}:a"));
            assertEquals(1, s.redis().scard("mw:{m}:s"), "applied twice, the same state as once");
            assertTrue(s.redis().pttl("mw:{m}:s") > 0);
        }
        assertThrows(CrossSlotException.class, () -> MultiWrite.of(Write.del("{a}x"), Write.del("{b}y")));
    }

    @Test
    void keysOfSeveralSlotsAreRefusedBeforeSending() {
        assertThrows(CrossSlotException.class, () -> ra.cas().update(List.of(Cas.Read.get("{a}x"), Cas.Read.get("{b}y")),
                s -> Cas.CasDecision.abort()));
        assertInstanceOf(Cas.CasOutcome.Aborted.class, ra.cas().update(List.of(Cas.Read.hgetAll("{a}h")), s -> Cas.CasDecision.abort()));
    }

    /**
     * A CAS connection dropped between WATCH and EXEC never comes back without its WATCH: that
     * attempt fails before EXEC, and the next one reads the other writer's value, so no update is
     * lost. (A connection that reconnected by itself would commit the stale decision unchecked.)
     * Inside {@code decide}: kill every connection of the client, write as another client, then
     * wait (bounded) until the client's main connection is back, and give its CAS connection a
     * further short chance (one that reconnected would be back by then, and its stale commit seen).
     */
    @Test
    void aDroppedWatchIsNeverCommittedOn() {
        String key = "cas:{drop}:n";
        try (RedisAtomic own = RedisAtomic.connect(server.url()); ServerStats admin = new ServerStats(server.url())) {
            admin.redis().set(key, "1");
            AtomicInteger decisions = new AtomicInteger();
            Cas.CasOutcome o = own.cas().update(List.of(Cas.Read.get(key)), s -> {
                if (decisions.incrementAndGet() == 1) {
                    assertTrue(admin.redis().clientKill(KillArgs.Builder.typeNormal().skipme()) >= 2);
                    admin.redis().set(key, "100");
                    assertTrue(othersConnected(admin, 1, 100_000), "the main connection came back");
                    othersConnected(admin, 2, 2000); // the CAS connection must not: no assertion either way
                }
                return increment(s, key);
            });
            assertInstanceOf(Cas.CasOutcome.Committed.class, o);
            assertEquals("101", admin.redis().get(key), "the other writer's update is not lost");
            assertEquals(2, decisions.get(), "decided again on the new value");
        }
    }

    /** Asks the server (at most {@code polls} times) until {@code n} connections besides {@code admin}'s are open. */
    private static boolean othersConnected(ServerStats admin, int n, int polls) {
        for (int i = 0; i < polls; i++) {
            if (admin.redis().clientList().strip().split("\n").length - 1 >= n) {
                return true;
            }
        }
        return false;
    }
}
