package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The same keys from Java and from the Rust library: the repository's own binary serves the Rust
 * library over HTTP ({@code redis-atomic serve}, namespace {@code serve}) on the same server. A
 * lock taken on one side is held for the other, fences keep increasing across both, and a rate
 * limit charged from both counts every decision once. The binary is {@code $REDIS_ATOMIC_BIN}, else
 * the workspace's {@code target/debug/redis-atomic} (cargo build -p redis-atomic-cli).
 */
@RedisServer
class InteropTest {
    private static Process serve;
    private static String base;
    private final HttpClient http = HttpClient.newHttpClient();
    private final RedisAtomic ra;

    InteropTest(EmbeddedRedis server) throws Exception {
        this.ra = Clients.shared(server);
        if (serve == null) {
            start(server);
        }
    }

    private static void start(EmbeddedRedis server) throws Exception {
        Path bin = Cli.bin();
        Path config = Files.createTempFile("serve", ".toml");
        Files.writeString(config, "[limits.api]\nlimits = [ { algorithm = \"fixed-window\", limit = 10, period_ms = 3600000 } ]\n");
        serve = new ProcessBuilder(bin.toString(), "serve", "--url", server.url(), "--listen", "127.0.0.1:0",
                "--config", config.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertTrue(line != null && line.startsWith("http://"), "serve did not start: " + line);
        base = line.strip();
    }

    /** One serve per class run (the constructor starts it for the first test). */
    @BeforeAll
    static void reset() {
        serve = null;
    }

    @AfterAll
    static void stop() throws Exception {
        if (serve != null) {
            serve.destroy();
            serve.waitFor();
        }
        Clients.closeAll();
    }

    private HttpResponse<String> post(String path, String json) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build();
        return http.send(req, HttpResponse.BodyHandlers.ofString());
    }

    private static long number(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":(\\d+)").matcher(json);
        assertTrue(m.find(), field + " in " + json);
        return Long.parseLong(m.group(1));
    }

    private static String text(String json, String field) {
        Matcher m = Pattern.compile("\"" + field + "\":\"([^\"]*)\"").matcher(json);
        assertTrue(m.find(), field + " in " + json);
        return m.group(1);
    }

    @Test
    void aLockHeldOnOneSideIsHeldForTheOther() throws Exception {
        Locks locks = ra.locks("serve");
        Lock java = (Lock) locks.acquire("shared", Duration.ofSeconds(30));
        assertEquals(409, post("/v1/locks/shared/acquire", "{\"ttl_ms\": 30000}").statusCode(), "Rust sees Java's lock");
        java.release();
        HttpResponse<String> rust = post("/v1/locks/shared/acquire", "{\"ttl_ms\": 30000}");
        assertEquals(200, rust.statusCode(), rust.body());
        long rustFence = number(rust.body(), "fence");
        assertTrue(rustFence > java.fence(), "fences increase across both");
        assertInstanceOf(Acquire.Held.class, locks.acquire("shared", Duration.ofSeconds(30)), "Java sees Rust's lock");
        assertEquals(rustFence, ((LockState.Locked) locks.inspect("shared")).fence());
        String release = "{\"token\": \"" + text(rust.body(), "token") + "\", \"fence\": " + rustFence + "}";
        assertEquals(new Release.Released(rustFence), locks.release("shared", text(rust.body(), "token"), rustFence));
        assertEquals(409, post("/v1/locks/shared/release", release).statusCode(), "released by Java already");
    }

    @Test
    void aRateLimitChargedFromBothCountsEveryDecisionOnce() throws Exception {
        RateLimiter java = ra.rateLimiter("serve", Policy.of(Limit.fixedWindow(10, Duration.ofHours(1))));
        int allowed = 0;
        for (int i = 0; i < 8; i++) {
            allowed += java.consume("api/customer-1", 1) instanceof Decision.Allowed ? 1 : 0;
            allowed += post("/v1/limits/api/consume", "{\"key\": \"customer-1\"}").statusCode() == 200 ? 1 : 0;
        }
        assertEquals(10, allowed, "ten admitted of sixteen, whichever side asked");
    }
}
