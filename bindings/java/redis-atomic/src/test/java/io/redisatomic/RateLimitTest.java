package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Rate limits on a real server: exact admission under concurrency, all-or-nothing policies, request ids. */
@RedisServer
class RateLimitTest {
    private final RedisAtomic ra;

    RateLimitTest(EmbeddedRedis server) {
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    /** Periods long enough that nothing refills while the test runs. */
    @ParameterizedTest
    @EnumSource(Algorithm.class)
    void exactlyLimitOfManyConcurrentConsumesAreAdmitted(Algorithm a) {
        RateLimiter rl = ra.rateLimiter("rlt", Policy.of(Limit.of(a, 50, Duration.ofHours(1))));
        List<CompletableFuture<Decision>> all = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            all.add(rl.consumeAsync("exact-" + a, 1, null));
        }
        long allowed = all.stream().map(CompletableFuture::join).filter(d -> d instanceof Decision.Allowed).count();
        assertEquals(50, allowed, a.canonical());
    }

    @Test
    void aRefusedPolicyRequestChargesNothing() {
        Limit small = Limit.fixedWindow(5, Duration.ofHours(1)).named("small");
        Limit big = Limit.fixedWindow(100, Duration.ofHours(1)).named("big");
        RateLimiter both = ra.rateLimiter("rlt", Policy.of(small, big));
        int allowed = 0;
        for (int i = 0; i < 20; i++) {
            allowed += both.consume("policy", 1) instanceof Decision.Allowed ? 1 : 0;
        }
        assertEquals(5, allowed);
        // The big limit's own key saw only the five admitted requests.
        Decision d = ra.rateLimiter("rlt", Policy.of(big)).consume("policy", 1);
        assertEquals(94, ((Decision.Allowed) d).remaining());
        Decision.Limited refused = (Decision.Limited) both.consume("policy", 1);
        assertEquals(2, refused.limits().size());
        assertEquals(94, refused.limits().get(1).remaining());
        assertTrue(refused.retryAfter().compareTo(Duration.ZERO) > 0);
    }

    @Test
    void aRequestIdIsDecidedOnce() {
        RateLimiter rl = ra.rateLimiter("rlt", Policy.of(Limit.gcra(10, Duration.ofHours(1))));
        Decision first = rl.consumeWithId("ids", 3, "req-1");
        Decision again = rl.consumeWithId("ids", 3, "req-1");
        assertFalse(first.replayed());
        assertTrue(again.replayed());
        assertEquals(((Decision.Allowed) first).remaining(), ((Decision.Allowed) again).remaining());
        assertEquals(6, ((Decision.Allowed) rl.consume("ids", 1)).remaining(), "the replay charged nothing");
    }

    @Test
    void tokenBucketBurst() {
        RateLimiter rl = ra.rateLimiter("rlt", Policy.of(Limit.tokenBucket(10, Duration.ofHours(1)).withBurst(3)));
        assertInstanceOf(Decision.Allowed.class, rl.consume("burst", 3));
        assertInstanceOf(Decision.Limited.class, rl.consume("burst", 1));
    }
}
