package peers.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Java peer drivers for {@code redis-atomic verify --driver} (docs/verify.md, "Drivers"): the
 * libraries Java users pick instead of redis-atomic, each run with its own defaults and judged
 * only by the invariant it documents (each peer's class quotes it). One program, the peer named
 * by its argument:
 *
 * <pre>
 *   redisson-lock         Redisson RLock           row mutex         (no fences)
 *   redisson-fenced-lock  Redisson RFencedLock     row lock          (its token is the fence)
 *   redisson-ratelimiter  Redisson RRateLimiter    row ratelimit-sl  (RateType.OVERALL)
 *   redisson-semaphore    Redisson RSemaphore      row semaphore
 *   bucket4j              Bucket4j (Lettuce CAS)   row ratelimit-win (greedy refill)
 * </pre>
 *
 * <p>The protocol is JSON lines on stdin and stdout, one request at a time. The driver never
 * resends: what is judged is what the library and its Redis client do on their own. Every
 * failure is answered with the code the protocol defines for what is known of it; a failure the
 * driver cannot classify is its own bug and ends it with a stack trace.
 */
public final class Driver {
    private Driver() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !Peer.NAMES.contains(args[0])) {
            System.err.println("usage: Driver " + String.join("|", Peer.NAMES));
            System.exit(2);
        }
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Peer peer = null;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            JsonNode m = json.readTree(line);
            String op = m.path("op").asText();
            Map<String, Object> answer;
            if (op.equals("hello")) {
                if (peer != null) {
                    peer.close();
                }
                Hello hello = Hello.of(m);
                peer = hello.cluster() ? null : Peer.of(args[0], hello);
                answer = peer == null
                        ? Map.of("driver", args[0], "rows", java.util.List.of(), "unsupported", "standalone only")
                        : Map.of("driver", args[0], "rows", peer.rows());
            } else if (peer == null) {
                throw new IllegalStateException("a request before the hello: " + line);
            } else {
                answer = answer(peer, op, m.path("args"));
            }
            System.out.println(json.writeValueAsString(answer));
            System.out.flush();
        }
        if (peer != null) {
            peer.close();
        }
        System.exit(0); // the clients' thread pools would keep the JVM alive
    }

    private static Map<String, Object> answer(Peer peer, String op, JsonNode args) throws Exception {
        try {
            return peer.run(op, args);
        } catch (Failed f) {
            System.err.println(op + ": " + f.code() + ": " + f.getCause());
            return Map.of("error", f.code());
        }
    }

    /** The hello's facts a peer needs: where, under which prefix, whether a fault is injected. */
    record Hello(String url, String namespace, boolean faulty, boolean cluster) {
        static Hello of(JsonNode m) {
            return new Hello(m.path("url").asText(), m.path("namespace").asText(),
                    !m.path("fault").isNull() && !m.path("fault").isMissingNode(), m.path("cluster").asBoolean());
        }

        String key(String name) {
            return namespace + ":" + name;
        }
    }
}
