package io.redisatomic.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.redisatomic.Acquire;
import io.redisatomic.Limit;
import io.redisatomic.Lock;
import io.redisatomic.Options;
import io.redisatomic.Permit;
import io.redisatomic.Policy;
import io.redisatomic.Quotas;
import io.redisatomic.RateLimiter;
import io.redisatomic.RedisAtomic;
import io.redisatomic.RedisAtomicException;
import io.redisatomic.Semaphore;
import io.redisatomic.SemaphoreAcquire;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The driver's loop and rows (the package's documentation says why it is built this way). */
public final class VerifyDriver {
    private static final List<String> ROWS = List.of("lock", "quota", "ratelimit-sl", "ratelimit-win", "semaphore");
    private static final ObjectMapper JSON = new ObjectMapper();

    private RedisAtomic client;
    private JsonNode server;
    private String row = "";
    private String namespace = "";
    private RateLimiter limiter;
    private Semaphore semaphore;

    private VerifyDriver() {
    }

    /** Answers the harness until stdin closes; a driver bug exits 1 with its stack trace. */
    public static void main(String[] args) throws IOException {
        VerifyDriver driver = new VerifyDriver();
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int status = 0;
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.println(JSON.writeValueAsString(driver.answer(JSON.readTree(line))));
                out.flush();
            }
        } catch (RuntimeException | IOException e) {
            e.printStackTrace();
            status = 1;
        } finally {
            driver.close();
        }
        System.exit(status); // Lettuce's threads would keep the JVM alive
    }

    private JsonNode answer(JsonNode msg) {
        String op = msg.get("op").asText();
        if (op.equals("hello")) {
            return hello(msg);
        }
        try {
            return run(op, msg.get("args"));
        } catch (RedisAtomicException e) {
            return JSON.createObjectNode().put("error", e.code());
        }
    }

    /**
     * Connects to the row's server and reads a lock's state once, changing nothing: a cold JVM's
     * first connect and first script call are slow, and belong in the hello's longer start-up
     * budget, not in the row's clock. A failed connect is left to the row's first request.
     */
    private JsonNode hello(JsonNode msg) {
        close();
        server = msg;
        row = msg.get("row").asText();
        namespace = msg.get("namespace").asText();
        limiter = null;
        semaphore = null;
        try {
            client().locks(namespace).inspect("driver-warm-up"); // a read: a cold JVM's first script call
        } catch (RedisAtomicException e) {
            close(); // the row's fault is already under way: the next request connects again
        }
        ObjectNode hi = JSON.createObjectNode().put("driver", "redis-atomic (Java, Lettuce)");
        ROWS.forEach(hi.putArray("rows")::add);
        return hi;
    }

    /**
     * The row's client, connected on first use: the row's fault is already injected when the
     * hello comes, and a failed connect is the library's {@code connection} error (nothing ran),
     * the answer of the request that needed it; the next request connects again.
     */
    private RedisAtomic client() {
        if (client == null) {
            Duration timeout = Duration.ofMillis(server.hasNonNull("fault") ? 200 : 10_000);
            Options options = Options.defaults().withTimeout(timeout);
            if (server.path("cluster").asBoolean()) {
                List<String> urls = new ArrayList<>();
                server.get("urls").forEach(u -> urls.add(u.asText()));
                client = RedisAtomic.connectCluster(urls, options);
            } else {
                client = RedisAtomic.connect(server.get("url").asText(), options);
            }
        }
        return client;
    }

    private JsonNode run(String op, JsonNode a) {
        RedisAtomic c = client();
        return switch (op) {
            case "lock.acquire" -> acquired(c.locks(namespace).acquireWithToken(
                    a.get("resource").asText(), a.get("token").asText(), millis(a, "ttl_ms")));
            case "lock.release" -> outcome(c.locks(namespace).release(
                    a.get("resource").asText(), a.get("token").asText(), a.get("handle").asLong()).outcome());
            case "quota.add" -> added(c.quotas(namespace).addWithId(a.get("name").asText(),
                    a.get("delta").asLong(), new Quotas.Bounds(a.get("min").asLong(), a.get("max").asLong()),
                    millis(a, "ttl_ms"), a.get("request_id").asText()));
            case "quota.get" -> outcome("value").put("value", c.quotas(namespace).get(a.get("name").asText()));
            case "ratelimit.consume" -> outcome(limiter(a).consume(a.get("name").asText(), 1).outcome());
            case "semaphore.acquire" -> permitted(semaphore(a).acquireWithToken(
                    a.get("token").asText(), millis(a, "ttl_ms")));
            case "semaphore.release" -> outcome(semaphore(a).release(
                    a.get("token").asText(), a.get("handle").asLong()).outcome());
            default -> throw new IllegalArgumentException("a request this driver does not know: " + op);
        };
    }

    private RateLimiter limiter(JsonNode a) {
        if (limiter == null) {
            long n = a.get("limit").asLong();
            Duration period = millis(a, "period_ms");
            Limit l = row.equals("ratelimit-sl") ? Limit.slidingLog(n, period) : Limit.fixedWindow(n, period);
            limiter = client().rateLimiter(namespace, Policy.of(l));
        }
        return limiter;
    }

    /** The row's semaphore, made by its first acquisition (which names the limit). */
    private Semaphore semaphore(JsonNode a) {
        if (semaphore == null) {
            semaphore = client().semaphore(namespace, a.get("name").asText(), a.get("limit").asInt());
        }
        return semaphore;
    }

    private static Duration millis(JsonNode a, String field) {
        return Duration.ofMillis(a.get(field).asLong());
    }

    private static ObjectNode outcome(String word) {
        return JSON.createObjectNode().put("outcome", word);
    }

    private static JsonNode acquired(Acquire got) {
        if (got instanceof Lock lock) {
            return outcome("acquired").put("fence", lock.fence()).put("handle", lock.fence());
        }
        return outcome(got.outcome());
    }

    private static JsonNode permitted(SemaphoreAcquire got) {
        if (got instanceof Permit permit) {
            return outcome("acquired").put("fence", permit.fence()).put("handle", permit.fence());
        }
        return outcome(got.outcome());
    }

    private static JsonNode added(Quotas.Bounded got) {
        return outcome(got instanceof Quotas.Bounded.Applied ? "applied" : "refused").put("value", got.value());
    }

    private void close() {
        if (client != null) {
            client.close();
            client = null;
        }
    }
}
