package peers.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.redisson.api.RSemaphore;

/**
 * Redisson's {@code RSemaphore} (row {@code semaphore}), as its guide documents it: "Redis based
 * distributed Semaphore object for Java similar to java.util.concurrent.Semaphore object";
 * {@code trySetPermits} "Tries to set number of permits", {@code tryAcquire} "Acquires a permit
 * only if one is available at the time of invocation", {@code release} "Releases a permit,
 * returning it to the semaphore". Judged: at most {@code limit} holders at once.
 *
 * <p>Not asked: a lease. Its permits have none and no owner (as java.util.concurrent's), so the
 * request's {@code ttl_ms} is not used, a release is never {@code lost}, and a permit whose
 * acquisition had an unknown outcome stays taken until someone releases it. The permits are set
 * once per semaphore ({@code trySetPermits(limit)}, which sets them only if unset) before its
 * first acquisition; if that call fails, the acquisition was not sent ({@code not_sent}).
 */
final class RedissonSemaphorePeer extends RedissonPeer {
    private final Set<String> set = new HashSet<>();

    RedissonSemaphorePeer(Driver.Hello hello) {
        super(hello);
    }

    @Override
    public List<String> rows() {
        return List.of("semaphore");
    }

    @Override
    public Map<String, Object> run(String op, JsonNode a) throws Failed {
        String name = a.path("name").asText();
        RSemaphore sem = client().getSemaphore(hello.key(name));
        return switch (op) {
            case "semaphore.acquire" -> {
                permits(name, sem, a.path("limit").asInt());
                yield call(sem::tryAcquire)
                        ? Map.of("outcome", "acquired", "handle", a.path("token").asText())
                        : Peer.outcome("full");
            }
            case "semaphore.release" -> {
                call(() -> {
                    sem.release();
                    return null;
                });
                yield Peer.outcome("released");
            }
            default -> throw Peer.unknownOp(op);
        };
    }

    private void permits(String name, RSemaphore sem, int limit) throws Failed {
        if (set.contains(name)) {
            return;
        }
        try {
            call(() -> sem.trySetPermits(limit));
        } catch (Failed f) {
            throw new Failed("not_sent", f);
        }
        set.add(name);
    }
}
