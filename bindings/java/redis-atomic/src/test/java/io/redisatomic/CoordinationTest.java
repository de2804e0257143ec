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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Semaphores, dedup and bounded counters on a real server, counting side effects under concurrency. */
@RedisServer
class CoordinationTest {
    private final RedisAtomic ra;

    CoordinationTest(EmbeddedRedis server) {
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    @Test
    void aSemaphoreNeverHasMoreThanCapacityHolders() throws Exception {
        Semaphore sem = ra.semaphore("ct", "exports", 3);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger entries = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> tasks = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            tasks.add(pool.submit(() -> {
                for (int i = 0; i < 5; ) {
                    if (sem.acquire(Duration.ofSeconds(30)) instanceof Permit p) {
                        try (p) {
                            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            entries.incrementAndGet();
                            inside.decrementAndGet();
                        }
                        i++;
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : tasks) {
            f.get();
        }
        pool.shutdown();
        assertTrue(most.get() <= 3, "at most capacity holders, saw " + most.get());
        assertEquals(80, entries.get());
        assertEquals(0, sem.inspect().live());
    }

    @Test
    void aFullSemaphoreSaysFullAndFencesIncrease() {
        Semaphore sem = ra.semaphore("ct", "one", 1);
        Permit a = (Permit) sem.acquire(Duration.ofSeconds(30));
        assertInstanceOf(Full.class, sem.acquire(Duration.ofSeconds(30)));
        assertEquals(new Release.Released(a.fence()), a.release());
        Permit b = (Permit) sem.acquire(Duration.ofSeconds(30));
        assertTrue(b.fence() > a.fence());
        assertEquals(b.fence(), sem.inspect().lastFence());
        assertEquals(new Lost(), sem.release(a.token(), a.fence()));
        b.close();
    }

    @Test
    void exactlyOneFirstSightingAmongConcurrentDuplicates() {
        Dedup dedup = ra.dedup("ct");
        List<CompletableFuture<Boolean>> all = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            all.add(dedup.firstSeenAsync("evt-1", Duration.ofMinutes(5), null));
        }
        assertEquals(1, all.stream().filter(CompletableFuture::join).count());
        assertTrue(dedup.firstSeenAs("evt-2", Duration.ofMinutes(5), "tok"));
        assertTrue(dedup.firstSeenAs("evt-2", Duration.ofMinutes(5), "tok"), "a resend recognises its own sighting");
        assertFalse(dedup.firstSeenAs("evt-2", Duration.ofMinutes(5), "other"));
    }

    @Test
    void aBoundedCounterNeverLeavesItsBounds() {
        Quotas q = ra.quotas("ct");
        Quotas.Bounds b = Quotas.Bounds.upTo(10);
        List<CompletableFuture<Quotas.Bounded>> all = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            all.add(q.addAsync("seats", 1, b, null, "refuse", null));
        }
        assertEquals(10, all.stream().map(CompletableFuture::join).filter(r -> r instanceof Quotas.Bounded.Applied).count());
        assertEquals(10, q.get("seats"));
        assertEquals(new Quotas.Bounded.Applied(9), q.addWithId("seats", -1, b, null, "refund-1"));
        assertEquals(new Quotas.Bounded.Applied(9), q.addWithId("seats", -1, b, null, "refund-1"), "applied once");
        assertEquals(new Quotas.Bounded.Applied(10), q.addClamped("seats", 5, b, null));
        assertEquals(new Quotas.Raise.Raised(12), q.raise("hwm", 12));
        assertEquals(new Quotas.Raise.Kept(12), q.raise("hwm", 7));
    }
}
