package peers.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;

/**
 * Redisson's {@code RRateLimiter} (row {@code ratelimit-sl}), as its guide documents it: "Redis
 * based distributed RateLimiter object for Java restricts the total rate of calls either from all
 * RateLimiter instances or a single Redisson instance"; {@code trySetRate(RateType.OVERALL, rate,
 * rateInterval)} — OVERALL: "Total rate for all RateLimiter instances" — and {@code tryAcquire}
 * "Acquires a permit only if one is available at the time of invocation". Its permits are logged
 * with their time and come back one interval after they were taken (a sliding log): judged, at
 * most {@code limit} admitted in any period.
 *
 * <p>The rate is set once per limiter ({@code trySetRate}, which sets it only if unset) before its
 * first call; if that call fails, the call was not sent ({@code not_sent}).
 */
final class RedissonRateLimiterPeer extends RedissonPeer {
    private final Set<String> set = new HashSet<>();

    RedissonRateLimiterPeer(Driver.Hello hello) {
        super(hello);
    }

    @Override
    public List<String> rows() {
        return List.of("ratelimit-sl");
    }

    @Override
    public Map<String, Object> run(String op, JsonNode a) throws Failed {
        if (!op.equals("ratelimit.consume")) {
            throw Peer.unknownOp(op);
        }
        String name = a.path("name").asText();
        RRateLimiter limiter = client().getRateLimiter(hello.key(name));
        if (!set.contains(name)) {
            long limit = a.path("limit").asLong();
            Duration period = Duration.ofMillis(a.path("period_ms").asLong());
            try {
                call(() -> limiter.trySetRate(RateType.OVERALL, limit, period));
            } catch (Failed f) {
                throw new Failed("not_sent", f);
            }
            set.add(name);
        }
        return Peer.outcome(call(limiter::tryAcquire) ? "allowed" : "limited");
    }
}
