package peers.driver;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * Bucket4j's Redis integration over Lettuce ({@code Bucket4jLettuce.casBasedBuilder}, as its
 * reference shows it; row {@code ratelimit-win}). Bucket4j: "Java rate-limiting library based on
 * token-bucket algorithm"; a bandwidth's capacity "is maximum amount of tokens which can be held
 * by bucket", and a greedy refill "tries to add the tokens to the bucket as soon as possible". The
 * bucket: capacity {@code limit}, {@code refillGreedy(limit, period)} (its quick start's shape), so
 * at most capacity + the tokens refilled within a period, 2 × limit, are admitted in any period:
 * the row's bound. Not asked: the rate within a period.
 *
 * <p>Lettuce with its defaults (it reconnects and replays the commands a dropped connection left
 * unanswered); under a fault its command timeout is 200 ms. Bucket4j reads the bucket and writes
 * it back with a compare-and-swap script, retrying on a conflict; an error of the consumption is
 * an unknown outcome (which of its commands ran is not said). A connection the hello could not
 * make is made by the next request, {@code connection} while that fails.
 */
final class Bucket4jPeer implements Peer {
    private final Driver.Hello hello;
    private final RedisClient client;
    private ProxyManager<String> buckets;

    Bucket4jPeer(Driver.Hello hello) {
        this.hello = hello;
        RedisURI uri = RedisURI.create(hello.url());
        if (hello.faulty()) {
            uri.setTimeout(Duration.ofMillis(200));
        }
        client = RedisClient.create(uri);
        if (hello.faulty()) {
            client.setOptions(ClientOptions.builder().timeoutOptions(TimeoutOptions.enabled()).build());
        }
        try {
            buckets = connect();
        } catch (RedisException e) {
            buckets = null;
        }
    }

    private ProxyManager<String> connect() {
        StatefulRedisConnection<String, byte[]> conn =
                client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
        return Bucket4jLettuce.casBasedBuilder(conn).build();
    }

    @Override
    public List<String> rows() {
        return List.of("ratelimit-win");
    }

    @Override
    public Map<String, Object> run(String op, JsonNode a) throws Failed {
        if (!op.equals("ratelimit.consume")) {
            throw Peer.unknownOp(op);
        }
        if (buckets == null) {
            try {
                buckets = connect();
            } catch (RedisException e) {
                throw Failed.notConnected(e);
            }
        }
        long limit = a.path("limit").asLong();
        Duration period = Duration.ofMillis(a.path("period_ms").asLong());
        BucketConfiguration config = BucketConfiguration.builder()
                .addLimit(Bandwidth.builder().capacity(limit).refillGreedy(limit, period).build())
                .build();
        try {
            boolean allowed = buckets.builder().build(hello.key(a.path("name").asText()), () -> config).tryConsume(1);
            return Peer.outcome(allowed ? "allowed" : "limited");
        } catch (RuntimeException e) {
            throw unknown(e);
        }
    }

    /** An error of Redis or of waiting for it: unknown; anything else is the driver's bug. */
    private static Failed unknown(RuntimeException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisException || t instanceof TimeoutException) {
                return Failed.unknown(e);
            }
        }
        throw e;
    }

    @Override
    public void close() {
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
