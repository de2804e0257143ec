package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Locks on a real server: mutual exclusion, fences, handles, the watchdog. */
@RedisServer
class LockTest {
    private final RedisAtomic ra;
    private final EmbeddedRedis server;

    LockTest(EmbeddedRedis server) {
        this.server = server;
        this.ra = Clients.shared(server);
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    /** Each thread takes the lock {@code rounds} times; inside, nobody else is, and fences only grow. */
    private static void neverOverlap(Locks locks, String resource, ExecutorService pool, int threads, int rounds) throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger entries = new AtomicInteger();
        java.util.concurrent.atomic.AtomicLong lastFence = new java.util.concurrent.atomic.AtomicLong();
        List<Future<?>> tasks = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            tasks.add(pool.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    try (Lock l = (Lock) locks.acquireTimeout(resource, Duration.ofSeconds(30), Duration.ofSeconds(60))) {
                        assertEquals(1, inside.incrementAndGet(), "two holders at once");
                        assertTrue(l.fence() > lastFence.get(), "fences strictly increase");
                        lastFence.set(l.fence());
                        entries.incrementAndGet();
                        inside.decrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : tasks) {
            f.get();
        }
        assertEquals(threads * rounds, entries.get());
    }

    @Test
    void sixtyFourThreadsNeverOverlap() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(64);
        try {
            neverOverlap(ra.locks("lt"), "counter", pool, 64, 4);
        } finally {
            pool.shutdown();
        }
    }

    /** On a JDK with virtual threads (21+) a thousand of them; on 17, a thousand platform threads. */
    @Test
    void aThousandThreadsNeverOverlap() throws Exception {
        ExecutorService pool = VirtualThreads.perTaskExecutor();
        try {
            neverOverlap(ra.locks("lt"), "virtual", pool, 1000, 1);
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void tryWithResourcesReleasesAndASecondReleaseIsRefused() {
        Locks locks = ra.locks("lt");
        Lock held;
        try (Lock l = (Lock) locks.acquire("twr", Duration.ofSeconds(30))) {
            held = l;
            assertInstanceOf(Acquire.Held.class, locks.acquire("twr", Duration.ofSeconds(30)));
        }
        assertEquals(new LockState.Free(held.fence()), locks.inspect("twr"));
        assertThrows(HandleEndedException.class, held::release);
        assertEquals(new Lost(), locks.release("twr", held.token(), held.fence()), "a late release changes nothing");
    }

    @Test
    void extendKeepsTheFenceAndALostLeaseSaysLost() {
        Locks locks = ra.locks("lt");
        Lock l = (Lock) locks.acquire("ext", Duration.ofSeconds(30));
        Extend e = l.extend(Duration.ofSeconds(60));
        assertEquals(l.fence(), ((Extend.Extended) e).fence());
        try (ServerStats s = new ServerStats(server.url())) {
            s.redis().del(locks.keys("ext").lock());
        }
        assertEquals(new Lost(), l.extend(Duration.ofSeconds(60)));
        assertEquals(new Lost(), l.release());
    }

    @Test
    void theWatchdogKeepsTheLeaseBeyondItsTtl() {
        Locks locks = ra.locks("lt");
        try (Lock l = (Lock) locks.acquire("watched", Duration.ofMillis(300))) {
            l.watch();
            // A waiter trying for ten leases' time finds it held all along.
            Acquire other = locks.acquireTimeout("watched", Duration.ofSeconds(1), Duration.ofSeconds(3));
            assertInstanceOf(Acquire.Held.class, other);
            assertInstanceOf(LockState.Locked.class, locks.inspect("watched"));
        }
        assertInstanceOf(LockState.Free.class, locks.inspect("watched"));
    }

    @Test
    void theWatchdogSignalsALostLease() {
        Locks locks = ra.locks("lt");
        Lock l = (Lock) locks.acquire("taken", Duration.ofMillis(300));
        var watched = l.watch();
        try (ServerStats s = new ServerStats(server.url())) {
            s.redis().set(locks.keys("taken").lock(), "1:someone-else");
        }
        CompletionException e = assertThrows(CompletionException.class, watched::join);
        assertInstanceOf(LeaseLostException.class, e.getCause());
        assertEquals("lease_lost", ((LeaseLostException) e.getCause()).code());
        assertEquals(LeaseLostException.Reason.NOT_HELD, ((LeaseLostException) e.getCause()).reason());
        assertFalse(l.isHeld());
    }

    @Test
    void aWatchThatCannotReachTheServerSignalsUnconfirmedBeforeTheLeaseEnds() throws Exception {
        Options once = Options.defaults().withRetry(RetryPolicy.none());
        Proxy proxy = new Proxy(server.port());
        try (RedisAtomic viaProxy = RedisAtomic.connect(proxy.url(), once)) {
            Lock l = (Lock) viaProxy.locks("lt").acquire("cut-off", Duration.ofMillis(400));
            assertTrue(l.isHeld());
            var watched = l.watch(new WatchConfig(0.25, 0.1));
            proxy.close(); // every renewal from now on fails to reach the server
            CompletionException e = assertThrows(CompletionException.class, watched::join);
            LeaseLostException lost = (LeaseLostException) e.getCause();
            assertEquals(LeaseLostException.Reason.UNCONFIRMED, lost.reason());
            assertTrue(l.failedRenewals() >= 1, "renewals were tried and failed");
            assertFalse(l.isHeld());
        }
        assertThrows(BadArgumentException.class, () -> new WatchConfig(0.9, 0.2));
    }
}
