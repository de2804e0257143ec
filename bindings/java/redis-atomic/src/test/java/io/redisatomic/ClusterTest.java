package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lettuce.core.KillArgs;
import io.redisatomic.junit.EmbeddedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A three-primary Redis Cluster made for the class: calls route to each key's slot. */
class ClusterTest {
    private static final List<EmbeddedRedis> NODES = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        for (int i = 0; i < 3; i++) {
            NODES.add(EmbeddedRedis.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"));
        }
        int[][] ranges = {{0, 5460}, {5461, 10922}, {10923, 16383}};
        for (int i = 0; i < 3; i++) {
            try (ServerStats s = new ServerStats(NODES.get(i).url())) {
                s.redis().dispatch(io.lettuce.core.protocol.CommandType.CLUSTER,
                        new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8),
                        new io.lettuce.core.protocol.CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8)
                                .add("ADDSLOTSRANGE").add(ranges[i][0]).add(ranges[i][1]));
                if (i > 0) {
                    s.redis().clusterMeet("127.0.0.1", NODES.get(0).port());
                }
            }
        }
        awaitClusterOk();
    }

    /** Polls every node's CLUSTER INFO until each sees the whole cluster (bounded). */
    private static void awaitClusterOk() throws Exception {
        for (int attempt = 0; attempt < 1000; attempt++) {
            boolean ok = true;
            for (EmbeddedRedis n : NODES) {
                try (ServerStats s = new ServerStats(n.url())) {
                    String info = s.redis().clusterInfo();
                    ok &= info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3");
                }
            }
            if (ok) {
                return;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("the cluster did not form");
    }

    @AfterAll
    static void stop() {
        NODES.forEach(EmbeddedRedis::close);
        NODES.clear();
    }

    @Test
    void locksAndLimitsOnEverySlot() {
        try (RedisAtomic ra = RedisAtomic.connectCluster(List.of(NODES.get(0).url()), Options.defaults())) {
            assertTrue(ra.isCluster());
            Locks locks = ra.locks("cl");
            Set<Integer> shards = new HashSet<>();
            for (int i = 0; i < 30; i++) {
                String resource = "order-" + i;
                int slot = Keyspace.slot(locks.keys(resource).lock());
                shards.add(slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2);
                Lock l = (Lock) locks.acquire(resource, Duration.ofSeconds(10));
                assertInstanceOf(Acquire.Held.class, locks.acquire(resource, Duration.ofSeconds(10)));
                assertEquals(new Release.Released(l.fence()), l.release());
            }
            assertEquals(3, shards.size(), "the resources spread over every primary");
            RateLimiter rl = ra.rateLimiter("cl", Policy.of(Limit.fixedWindow(3, Duration.ofHours(1)).named("a"),
                    Limit.gcra(10, Duration.ofHours(1)).named("b")));
            long allowed = 0;
            for (int i = 0; i < 5; i++) {
                allowed += rl.consume("k", 1) instanceof Decision.Allowed ? 1 : 0;
            }
            assertEquals(3, allowed);
        }
    }

    @Test
    void casAndMultiWriteRunOnTheKeysPrimary() {
        try (RedisAtomic ra = RedisAtomic.connectCluster(List.of(NODES.get(0).url()), Options.defaults())) {
            for (String tag : List.of("a", "b", "c", "d", "e")) {
                String key = "cas:{" + tag + "}:n";
                MultiWrite.of(Write.set(key, "1".getBytes(java.nio.charset.StandardCharsets.UTF_8))).execute(ra);
                Cas.CasOutcome o = ra.cas().update(List.of(Cas.Read.get(key)), snap -> Cas.CasDecision.commit(List.of(
                        Write.set(key, Long.toString(Long.parseLong(snap.string(0)) + 1).getBytes(java.nio.charset.StandardCharsets.UTF_8)))));
                assertEquals(new Cas.CasOutcome.Committed(1), o);
                int slot = Keyspace.slot(key);
                try (ServerStats s = new ServerStats(NODES.get(slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2).url())) {
                    assertEquals("2", s.redis().get(key), "written on the primary of its slot");
                }
            }
        }
    }

    @Test
    void fcallRoutesToEachKeysPrimaryOnceTheLibraryIsDeployed() throws Exception {
        Cli.run("functions", "deploy", "--cluster", "--url", NODES.get(0).url());
        try (RedisAtomic ra = RedisAtomic.connectCluster(List.of(NODES.get(0).url()), Options.defaults().withDelivery(Delivery.FUNCTIONS))) {
            Locks locks = ra.locks("fcl");
            for (int i = 0; i < 12; i++) {
                Lock l = (Lock) locks.acquire("r-" + i, Duration.ofSeconds(10));
                assertInstanceOf(LockState.Locked.class, locks.inspect("r-" + i));
                assertEquals(new Release.Released(l.fence()), l.release());
            }
            assertEquals(Delivery.FUNCTIONS, ra.delivery(), "every call found its function on its primary");
        }
        long fcalls = 0;
        for (EmbeddedRedis n : NODES) {
            try (ServerStats s = new ServerStats(n.url())) {
                fcalls += s.calls("fcall");
            }
        }
        assertTrue(fcalls >= 24, "acquire and release of each lock by FCALL, got " + fcalls);
    }

    /**
     * Every connection to one primary killed on the server side: the library's connection to that
     * node comes back by itself and calls to its slots succeed again, and nothing is resent — the
     * server counts one EVALSHA per call that succeeded, and the limit was charged once each. The
     * kill races Lettuce noticing it, so the first calls after it may be refused (not sent) or, when
     * written to the dead socket, unknown (the server had closed it: they cannot have run); the loop
     * is bounded. A node connection opens on first use and a call meanwhile is refused (not sent):
     * the policy leaves room for that on a busy machine.
     */
    @Test
    void aKilledNodeConnectionComesBackWithoutResending() {
        Options o = Options.defaults().withRetry(new RetryPolicy(40, Duration.ofSeconds(20), Duration.ofMillis(5), Duration.ofMillis(100)));
        try (RedisAtomic ra = RedisAtomic.connectCluster(List.of(NODES.get(0).url()), o)) {
            RateLimiter rl = ra.rateLimiter("ck", Policy.of(Limit.fixedWindow(1000, Duration.ofHours(1))));
            int slot = Keyspace.slot(rl.keys("k", null).limits().get(0));
            try (ServerStats node = new ServerStats(NODES.get(slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2).url())) {
                assertInstanceOf(Decision.Allowed.class, rl.consume("k", 1)); // the script is loaded now
                long before = node.calls("evalsha");
                assertTrue(node.redis().clientKill(KillArgs.Builder.typeNormal().skipme()) >= 1, "the library's connection was killed");
                int allowed = 0;
                Decision.Allowed last = null;
                for (int call = 0; call < 20 && allowed < 5; call++) {
                    try {
                        last = (Decision.Allowed) rl.consume("k", 1);
                        allowed++;
                    } catch (NotSentException | OutcomeUnknownException e) {
                        assertEquals(0, allowed, "once back, every call succeeds: " + e);
                    }
                }
                assertEquals(5, allowed, "calls to the killed node's slots succeed again");
                assertEquals(allowed, node.calls("evalsha") - before, "one EVALSHA per call that succeeded: nothing resent");
                assertEquals(1000 - 1 - allowed, last.remaining(), "charged once per call that succeeded");
            }
        }
    }
}
