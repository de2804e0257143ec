package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The five lines of docs/java.md, as written there (the URL is the test server's). */
@RedisServer
class ExampleTest {
    @Test
    void fiveLines(EmbeddedRedis server) {
        String printed;
        try (RedisAtomic client = RedisAtomic.connect(server.url())) {
            RateLimiter limiter = client.rateLimiter("api", Policy.of(Limit.gcra(10, Duration.ofSeconds(1))));
            Decision d = limiter.consume("user-42", 1);
            printed = d instanceof Decision.Limited l ? "retry in " + l.retryAfter() : "ok";
        }
        assertEquals("ok", printed);
    }
}
