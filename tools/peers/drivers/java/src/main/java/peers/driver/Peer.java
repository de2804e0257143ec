package peers.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/** One library behind the protocol: the rows it declares and how it runs a request. */
interface Peer extends AutoCloseable {
    List<String> NAMES = List.of(
            "redisson-lock", "redisson-fenced-lock", "redisson-ratelimiter", "redisson-semaphore", "bucket4j");

    List<String> rows();

    /** Answers one request: an outcome, or throws {@link Failed} with the protocol's code. */
    Map<String, Object> run(String op, JsonNode args) throws Failed;

    @Override
    void close();

    static Peer of(String name, Driver.Hello hello) {
        return switch (name) {
            case "redisson-lock" -> new RedissonLockPeer(hello, false);
            case "redisson-fenced-lock" -> new RedissonLockPeer(hello, true);
            case "redisson-ratelimiter" -> new RedissonRateLimiterPeer(hello);
            case "redisson-semaphore" -> new RedissonSemaphorePeer(hello);
            case "bucket4j" -> new Bucket4jPeer(hello);
            default -> throw new IllegalArgumentException(name);
        };
    }

    static Map<String, Object> outcome(String word) {
        return Map.of("outcome", word);
    }

    static IllegalArgumentException unknownOp(String op) {
        return new IllegalArgumentException("not a request of this peer's rows: " + op);
    }
}
