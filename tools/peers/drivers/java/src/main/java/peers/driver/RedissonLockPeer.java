package peers.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;

/**
 * Redisson's {@code RLock} (row {@code mutex}) and {@code RFencedLock} (row {@code lock}).
 *
 * <p>RLock, as its guide documents it: "Redis based distributed reentrant Lock object for Java and
 * implements Lock interface"; with a {@code leaseTime} "lock will be released automatically" after
 * it. Judged: one holder at a time. It has no fences (not asked).
 *
 * <p>RFencedLock: "This type of lock maintains the fencing token to avoid cases when Client
 * acquired the lock was delayed due to long GC pause or other reason and can't detect that it
 * doesn't own the lock anymore. [...] Token should be checked if it's greater or equal with the
 * previous one by the service guarded by this lock and reject operation if condition is false."
 * Judged: one holder at a time, and its token as the fence. "Greater or equal" lets one holder
 * use its token for several writes; a token two holders share would let the stale one through
 * that check, so distinct holders' tokens must strictly increase — the {@code lock} row's rule.
 *
 * <p>One attempt per acquisition ({@code tryLock} with no wait), the lease the harness asks for
 * (so no watchdog), each acquisition on its own thread ({@link Holder}). A release that Redisson
 * refuses because the caller is not the holder ({@code IllegalMonitorStateException}: the lease
 * ran out, or another holder has it) is {@code lost}.
 */
final class RedissonLockPeer extends RedissonPeer {
    private record Held(RLock lock, Holder holder) {}

    private final boolean fenced;
    private final Map<String, Held> held = new HashMap<>();

    RedissonLockPeer(Driver.Hello hello, boolean fenced) {
        super(hello);
        this.fenced = fenced;
    }

    @Override
    public List<String> rows() {
        return List.of(fenced ? "lock" : "mutex");
    }

    @Override
    public Map<String, Object> run(String op, JsonNode a) throws Failed {
        return switch (op) {
            case "lock.acquire" -> acquire(a.path("resource").asText(), a.path("ttl_ms").asLong(), a.path("token").asText());
            case "lock.release" -> release(a.path("handle").asText());
            default -> throw Peer.unknownOp(op);
        };
    }

    private Map<String, Object> acquire(String resource, long ttl, String token) throws Failed {
        String key = hello.key(resource);
        Holder holder = new Holder();
        try {
            if (fenced) {
                RFencedLock lock = client().getFencedLock(key);
                Long fence = holder.run(() -> lock.tryLockAndGetToken(0, ttl, TimeUnit.MILLISECONDS));
                return fence == null ? busy(holder) : acquired(token, lock, holder, Map.of("fence", fence));
            }
            RLock lock = client().getLock(key);
            boolean got = holder.run(() -> lock.tryLock(0, ttl, TimeUnit.MILLISECONDS));
            return got ? acquired(token, lock, holder, Map.of()) : busy(holder);
        } catch (Failed f) {
            holder.close();
            throw f;
        }
    }

    private static Map<String, Object> busy(Holder holder) {
        holder.close();
        return Peer.outcome("held");
    }

    private Map<String, Object> acquired(String token, RLock lock, Holder holder, Map<String, Object> fence) {
        held.put(token, new Held(lock, holder));
        Map<String, Object> answer = new HashMap<>(fence);
        answer.put("outcome", "acquired");
        answer.put("handle", token);
        return answer;
    }

    private Map<String, Object> release(String token) throws Failed {
        Held h = held.remove(token);
        try (Holder holder = h.holder()) {
            holder.run(() -> {
                h.lock().unlock();
                return null;
            });
            return Peer.outcome("released");
        } catch (IllegalMonitorStateException e) {
            return Peer.outcome("lost");
        }
    }

    @Override
    public void close() {
        held.values().forEach(h -> h.holder().close());
        super.close();
    }
}
