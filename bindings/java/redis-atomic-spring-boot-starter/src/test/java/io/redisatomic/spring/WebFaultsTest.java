package io.redisatomic.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.Limit;
import io.redisatomic.Policy;
import io.redisatomic.RedisAtomic;
import io.redisatomic.junit.EmbeddedRedis;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.method.HandlerMethod;

/**
 * What the web pieces do when Redis goes away (a real server, stopped): the rate-limit
 * interceptor runs the handler unlimited under fail-open and answers 503 + Retry-After under
 * fail-closed; the health indicator turns from up to down with the error's code.
 */
class WebFaultsTest {
    /** A handler the interceptor limits. */
    static final class Handlers {
        @RateLimited("api")
        public String limited() {
            return "ok";
        }
    }

    private static RateLimitInterceptor interceptor(RedisAtomic client, RedisAtomicProperties.Unavailable unavailable) {
        RedisAtomicProperties.PolicySettings p = new RedisAtomicProperties.PolicySettings();
        p.setUnavailable(unavailable);
        p.setKeyHeader("X-Key");
        RateLimitInterceptor.Limiter l = new RateLimitInterceptor.Limiter(
                client.rateLimiter("faults", Policy.of(Limit.gcra(1, Duration.ofMinutes(1)))), p);
        return new RateLimitInterceptor(Map.of("api", l), RequestObserver.NONE);
    }

    private static MockHttpServletResponse call(RateLimitInterceptor i, boolean[] ran) throws Exception {
        MockHttpServletRequest req = new MockHttpServletRequest("GET", "/limited");
        req.addHeader("X-Key", "k");
        MockHttpServletResponse res = new MockHttpServletResponse();
        ran[0] = i.preHandle(req, res, new HandlerMethod(new Handlers(), Handlers.class.getMethod("limited")));
        return res;
    }

    @Test
    void failOpenRunsUnlimitedFailClosedAnswers503AndHealthGoesDown() throws Exception {
        EmbeddedRedis server = EmbeddedRedis.start();
        try (RedisAtomic client = RedisAtomic.connect(server.url())) {
            RateLimitInterceptor open = interceptor(client, RedisAtomicProperties.Unavailable.FAIL_OPEN);
            RateLimitInterceptor closed = interceptor(client, RedisAtomicProperties.Unavailable.FAIL_CLOSED);
            RedisAtomicHealthIndicator health = new RedisAtomicHealthIndicator(client);
            boolean[] ran = new boolean[1];
            assertEquals(Status.UP, health.health().getStatus());
            assertEquals(200, call(open, ran).getStatus());
            assertTrue(ran[0]);
            assertEquals(429, call(closed, ran).getStatus(), "the one unit is spent: Redis decides while it is up");
            assertFalse(ran[0]);

            server.close();
            call(open, ran);
            assertTrue(ran[0], "fail-open: the handler runs unlimited");
            MockHttpServletResponse refused = call(closed, ran);
            assertFalse(ran[0]);
            assertEquals(503, refused.getStatus(), "fail-closed");
            assertEquals("1", refused.getHeader("Retry-After"));
            Health down = health.health();
            assertEquals(Status.DOWN, down.getStatus());
            assertEquals("connection", down.getDetails().get("code"));
        } finally {
            server.close();
        }
    }
}
