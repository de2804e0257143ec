package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The vectors' staged failures, for real: a connect to a closed port, and requests that reach a
 * stopped (SIGSTOP) server and time out, whose outcome is unknown and whose retry safety and
 * attempts depend on the call.
 */
@RedisServer
class ErrorEventsTest {
    private final EmbeddedRedis server;

    ErrorEventsTest(EmbeddedRedis server) {
        this.server = server;
    }

    @Test
    void everyEvent() throws Exception {
        int ran = 0;
        for (JsonNode c : Vectors.load().get("errors")) {
            if (!c.has("event")) {
                continue;
            }
            RedisAtomicException e = switch (c.get("event").asText()) {
                case "connect_refused" -> refused();
                case "timeout_after_send" -> timeoutAfterSend(c);
                default -> throw new AssertionError("unknown event " + c.get("event"));
            };
            Facts.expect(c, e);
            ran++;
        }
        assertTrue(ran >= 4, "the vectors stage at least four events");
    }

    @Test
    void badInputIsRefusedBeforeSending() {
        try (RedisAtomic ra = RedisAtomic.connect(server.url())) {
            BadArgumentException e = assertThrows(BadArgumentException.class,
                    () -> ra.locks("app").acquire("r", Duration.ZERO));
            assertTrue(e.getMessage().contains("ttl must be between 1 ms"), e.getMessage());
            assertThrows(BadArgumentException.class, () -> ra.locks("a:b"));
            assertThrows(BadArgumentException.class, () -> ra.locks("app").acquire("{r}", Duration.ofSeconds(1)));
            assertThrows(BadArgumentException.class, () -> ra.locks("app").acquireWithToken("r", "a\nb", Duration.ofSeconds(1)));
            assertThrows(CostExceedsBurstException.class,
                    () -> ra.rateLimiter("app", Policy.of(Limit.gcra(10, Duration.ofSeconds(1)))).consume("k", 11));
            assertThrows(BadArgumentException.class, () -> Limit.fixedWindow(0, Duration.ofSeconds(1)));
            assertThrows(BadArgumentException.class, () -> RedisAtomic.connect("http://127.0.0.1:1"));
        }
    }

    private static RedisAtomicException refused() throws Exception {
        int port = EmbeddedRedis.freePort();
        return assertThrows(ConnectionException.class, () -> RedisAtomic.connect("redis://127.0.0.1:" + port).close());
    }

    private RedisAtomicException timeoutAfterSend(JsonNode c) throws Exception {
        JsonNode client = c.get("client");
        RetryPolicy retry = new RetryPolicy(client.get("max_attempts").asInt(), Duration.ofSeconds(10),
                Duration.ofMillis(5), Duration.ofMillis(50));
        Options o = Options.defaults().withTimeout(Duration.ofMillis(client.get("timeout_ms").asLong())).withRetry(retry);
        try (RedisAtomic ra = RedisAtomic.connect(server.url(), o)) {
            Consumer<RedisAtomic> op = operation(c.get("operation").asText(), c.get("input"));
            op.accept(ra); // connected, scripts loaded
            server.signal("STOP");
            try {
                return assertThrows(OutcomeUnknownException.class, () -> op.accept(ra));
            } finally {
                server.signal("CONT");
            }
        }
    }

    private static Consumer<RedisAtomic> operation(String name, JsonNode in) {
        String ns = in.get("namespace").asText();
        return switch (name) {
            case "lock.acquire" -> ra -> ra.locks(ns).acquire(in.get("resource").asText(),
                    Duration.ofMillis(in.get("ttl_ms").asLong()));
            case "lock.acquire_with_token" -> ra -> ra.locks(ns).acquireWithToken(in.get("resource").asText(),
                    in.get("token").asText(), Duration.ofMillis(in.get("ttl_ms").asLong()));
            case "ratelimit.consume" -> ra -> ra.rateLimiter(ns, Vectors.policy(in.get("limits")))
                    .consume(in.get("identity").asText(), in.get("cost").asLong());
            default -> throw new AssertionError("no operation " + name);
        };
    }
}
