package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The library's connections are at-most-once: a connection lost after the server ran a request
 * that is not retry-safe leaves it run once (counted on the server), and the caller gets an
 * unknown outcome that says it is not safe to resend. Lettuce's default (commands accepted while
 * disconnected) would replay it on the new connection, whatever its {@code replayFilter} says:
 * with {@code ACCEPT_COMMANDS} in {@link AtMostOnce} every test here fails.
 */
@RedisServer
class AtMostOnceTest {
    private final EmbeddedRedis server;

    AtMostOnceTest(EmbeddedRedis server) {
        this.server = server;
    }

    @Test
    void unsafeConsumeRunsOnceWhenItsReplyIsLost() throws Exception {
        try (Proxy proxy = new Proxy(server.port());
                RedisAtomic ra = RedisAtomic.connect(proxy.url());
                ServerStats stats = new ServerStats(server.url())) {
            RateLimiter rl = ra.rateLimiter("amo", Policy.of(Limit.fixedWindow(100, Duration.ofMinutes(1))));
            assertTrue(rl.consume("k", 1) instanceof Decision.Allowed); // the script is loaded now
            long before = stats.calls("evalsha");
            proxy.dropNextReply();
            OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class, () -> rl.consume("k", 1));
            assertFalse(e.retrySafe());
            assertFalse(e.nothingRan());
            assertEquals(1, e.attempts());
            assertEquals(1, stats.calls("evalsha") - before, "sent once, not resent");
            Decision d = rl.consume("k", 1); // a new connection; nothing replayed on it
            assertEquals(97, ((Decision.Allowed) d).remaining(), "three charges in all: the lost one once");
            assertEquals(2, stats.calls("evalsha") - before);
        }
    }

    @Test
    void lockAcquireWithoutTokenIsUnknownAndNotRetrySafe() throws Exception {
        Options once = Options.defaults().withRetry(RetryPolicy.none());
        try (Proxy proxy = new Proxy(server.port());
                RedisAtomic ra = RedisAtomic.connect(proxy.url(), once);
                ServerStats stats = new ServerStats(server.url())) {
            Locks locks = ra.locks("amo");
            assertInstanceOf(LockState.Free.class, locks.inspect("r"));
            ((Lock) locks.acquire("warm", Duration.ofSeconds(5))).release(); // lock_acquire is loaded now
            long before = stats.calls("evalsha");
            proxy.dropNextReply();
            OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class,
                    () -> locks.acquire("r", Duration.ofSeconds(30)));
            assertFalse(e.retrySafe(), "a random token the caller never saw: resending takes a second lease");
            assertEquals(1, stats.calls("evalsha") - before, "the script ran once");
            LockState state = locks.inspect("r");
            assertInstanceOf(LockState.Locked.class, state, "the lost acquire did take the lock");
        }
    }

    @Test
    void lockAcquireWithTokenIsRetrySafe() throws Exception {
        Options once = Options.defaults().withRetry(RetryPolicy.none());
        try (Proxy proxy = new Proxy(server.port()); RedisAtomic ra = RedisAtomic.connect(proxy.url(), once)) {
            Locks locks = ra.locks("amo2");
            ((Lock) locks.acquire("warm", Duration.ofSeconds(5))).release();
            proxy.dropNextReply();
            OutcomeUnknownException e = assertThrows(OutcomeUnknownException.class,
                    () -> locks.acquireWithToken("r", "tok-1", Duration.ofSeconds(30)));
            assertTrue(e.retrySafe());
            Lock again = (Lock) locks.acquireWithToken("r", "tok-1", Duration.ofSeconds(30));
            assertEquals(((LockState.Locked) locks.inspect("r")).fence(), again.fence(), "the resend got its own fence back");
        }
    }
}
