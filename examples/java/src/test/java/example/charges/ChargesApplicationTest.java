package example.charges;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The example service on a real redis-server: concurrent duplicate charges run once; over-limit quotes get 429. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ChargesApplicationTest {
    private static EmbeddedRedis server;
    private final HttpClient http = HttpClient.newHttpClient();
    @Autowired
    private Ledger ledger;
    @Autowired
    private Environment env;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) throws Exception {
        server = EmbeddedRedis.start();
        registry.add("spring.data.redis.port", server::port);
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + env.getProperty("local.server.port") + path);
    }

    private CompletableFuture<HttpResponse<String>> charge(String key, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri("/charges")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void concurrentDuplicateChargesChargeOnce() {
        int before = ledger.charges().size();
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            sent.add(charge("order-7-attempt", "{\"amount\":500}"));
        }
        String created = null;
        for (CompletableFuture<HttpResponse<String>> f : sent) {
            HttpResponse<String> r = f.join();
            if (r.statusCode() == 409) {
                assertTrue(r.headers().firstValue("Retry-After").isPresent());
                assertEquals("application/problem+json", r.headers().firstValue("Content-Type").orElse(""));
                continue;
            }
            assertEquals(201, r.statusCode(), r.body());
            created = created == null ? r.body() : created;
            assertEquals(created, r.body(), "every answer is the one charge");
        }
        assertEquals(before + 1, ledger.charges().size(), "one charge for 24 duplicates");
        HttpResponse<String> replay = charge("order-7-attempt", "{\"amount\":500}").join();
        assertEquals(201, replay.statusCode());
        assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(""));
        assertEquals(before + 1, ledger.charges().size());
        assertNotNull(created);
    }

    @Test
    void theIdempotencyKeyIsRequiredAndBoundToTheRequest() {
        assertEquals(400, charge(null, "{}").join().statusCode());
        assertEquals(201, charge("k-422", "{\"amount\":1}").join().statusCode());
        assertEquals(422, charge("k-422", "{\"amount\":2}").join().statusCode());
    }

    @Test
    void overLimitQuotesAre429WithHeaders() throws Exception {
        int ok = 0;
        int limited = 0;
        for (int i = 0; i < 8; i++) {
            HttpRequest req = HttpRequest.newBuilder(uri("/quotes")).header("X-Api-Key", "customer-42").GET().build();
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            assertEquals("\"per-minute\";q=5;w=60, \"per-day\";q=100;w=86400",
                    r.headers().firstValue("RateLimit-Policy").orElse(""));
            assertTrue(r.headers().firstValue("RateLimit").orElse("").startsWith("\"per-minute\";r="));
            if (r.statusCode() == 429) {
                limited++;
                assertTrue(Long.parseLong(r.headers().firstValue("Retry-After").orElse("0")) >= 1);
            } else {
                assertEquals(200, r.statusCode());
                ok++;
            }
        }
        assertEquals(5, ok);
        assertEquals(3, limited);
    }

    @Test
    void aStalledRedisRefusesChargesAndFailsEachPolicyAsConfigured() throws Exception {
        int before = ledger.charges().size();
        server.signal("STOP");
        try {
            HttpResponse<String> charge = charge("stalled-1", "{}").join();
            assertEquals(503, charge.statusCode(), "never run without its claim");
            HttpRequest quote = HttpRequest.newBuilder(uri("/quotes")).header("X-Api-Key", "k").GET().build();
            HttpResponse<String> closed = http.send(quote, HttpResponse.BodyHandlers.ofString());
            assertEquals(503, closed.statusCode());
            assertEquals("1", closed.headers().firstValue("Retry-After").orElse(""));
            HttpResponse<String> open = http.send(HttpRequest.newBuilder(uri("/headlines")).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, open.statusCode(), "fail-open serves unlimited");
        } finally {
            server.signal("CONT");
        }
        assertEquals(before, ledger.charges().size());
    }

    @Test
    void healthAndMetrics() throws Exception {
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(uri("/actuator/health")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, health.statusCode(), health.body());
        assertTrue(health.body().matches(".*\"redisAtomic\":\\{(\"details\":\\{[^{}]*\\},)?\"status\":\"UP\".*"), health.body());
        charge("metrics-1", "{}").join();
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(uri("/actuator/metrics/redis.atomic.http.requests")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode(), metrics.body());
    }
}
