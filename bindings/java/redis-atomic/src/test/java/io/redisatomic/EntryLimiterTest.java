package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.EntryLimiter.Entry;
import io.redisatomic.EntryLimiter.EntryMode;
import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The entry limiter on a real server: all or nothing across entries, modes, request ids, exact admission under concurrency. */
@RedisServer
class EntryLimiterTest {
    private static final Duration HOUR = Duration.ofHours(1); // long windows: no window boundary falls inside a test
    private final RedisAtomic ra;

    EntryLimiterTest(EmbeddedRedis server) {
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    @Test
    void aRefusedRequestChargesNoEntry() {
        EntryLimiter el = ra.entryLimiter("el1");
        List<Entry> req = List.of(Entry.of(Limit.fixedWindow(5, HOUR).named("user"), "alice", 1),
                Entry.of(Limit.gcra(3, HOUR).named("global"), "all", 1));
        int allowed = 0;
        for (int i = 0; i < 6; i++) {
            allowed += el.decide("tenant", req).decision() instanceof Decision.Allowed ? 1 : 0;
        }
        assertEquals(3, allowed);
        EntryLimiter.EntriesVerdict check = el.decide("tenant", List.of(new Entry(req.get(0).limit(), "alice", 0, EntryMode.ENFORCE)));
        assertEquals(2, check.entries().get(0).remaining(), "the user entry was charged only by the 3 admitted requests");
    }

    @Test
    void shadowNeverRefusesAndQuotaRefusesOnlyWhenEveryQuotaRefuses() {
        EntryLimiter el = ra.entryLimiter("el2");
        Limit one = Limit.fixedWindow(1, HOUR).named("one");
        Limit ten = Limit.fixedWindow(10, HOUR).named("ten");
        for (int i = 0; i < 3; i++) {
            EntryLimiter.EntriesVerdict v = el.decide("t", List.of(new Entry(one, "s", 1, EntryMode.SHADOW), Entry.of(ten, "s", 1)));
            assertInstanceOf(Decision.Allowed.class, v.decision(), "a shadow entry never refuses the request");
            assertEquals(i == 0, v.entries().get(0).admits());
        }
        List<Entry> quotas = List.of(new Entry(one, "q1", 1, EntryMode.QUOTA), new Entry(Limit.fixedWindow(2, HOUR).named("two"), "q2", 1, EntryMode.QUOTA));
        assertInstanceOf(Decision.Allowed.class, el.decide("t", quotas).decision());
        assertInstanceOf(Decision.Allowed.class, el.decide("t", quotas).decision(), "q2 still admits");
        assertInstanceOf(Decision.Limited.class, el.decide("t", quotas).decision(), "every quota entry refuses");
    }

    @Test
    void aRequestIdReplaysWithoutCharging() {
        EntryLimiter el = ra.entryLimiter("el3");
        List<Entry> req = List.of(Entry.of(Limit.tokenBucket(4, HOUR).named("b"), "u", 2));
        EntryLimiter.EntriesVerdict first = el.decideWithId("t", req, "req-1");
        EntryLimiter.EntriesVerdict again = el.decideWithId("t", req, "req-1");
        assertFalse(first.replayed());
        assertTrue(again.replayed());
        assertEquals(first.entries().get(0).remaining(), again.entries().get(0).remaining());
        assertEquals(0, ((Decision.Allowed) el.decide("t", req).decision()).remaining(), "two charges of 2 in all, the replay none");
    }

    @Test
    void entriesOfOneKeyMergeAndExactlyTheLimitIsAdmittedUnderConcurrency() throws Exception {
        EntryLimiter el = ra.entryLimiter("el4");
        Limit l = Limit.slidingWindow(50, HOUR).named("w");
        EntryLimiter.EntriesVerdict merged = el.decide("t", List.of(Entry.of(l, "m", 2), Entry.of(l, "m", 3)));
        assertEquals(45, merged.entries().get(0).remaining());
        assertEquals(merged.entries().get(0), merged.entries().get(1), "both entries report their one key");
        AtomicInteger allowed = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            done.add(pool.submit(() -> {
                for (int i = 0; i < 20; i++) {
                    if (el.decide("t", List.of(Entry.of(l, "c", 1))).decision() instanceof Decision.Allowed) {
                        allowed.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        assertEquals(50, allowed.get());
        assertThrows(CostExceedsBurstException.class, () -> el.decide("t", List.of(Entry.of(l, "x", 30), Entry.of(l, "x", 30))));
        assertThrows(BadArgumentException.class, () -> el.decide("t", List.of()));
    }
}
