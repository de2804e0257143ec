package io.redisatomic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/** Derives a key vector's keys through the library's public API, answering in the vectors' shape. */
final class Keys {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private Keys() {
    }

    static JsonNode derive(String call, JsonNode in) {
        ObjectNode out = F.objectNode();
        switch (call) {
            case "slot" -> out.put("slot", Keyspace.slot(in.get("key").asText()));
            case "keyspace.key" -> {
                List<String> parts = new ArrayList<>();
                in.get("parts").forEach(p -> parts.add(p.asText()));
                String key = Keyspace.of(in.get("namespace").asText()).key(in.get("primitive").asText(),
                        in.get("schema").asInt(), in.get("tag").asText(), parts.toArray(String[]::new));
                out.put("key", key).put("slot", Keyspace.slot(key));
            }
            case "lock.keys" -> {
                Locks.LockKeys k = new Locks(null, Keyspace.of(in.get("namespace").asText())).keys(in.get("resource").asText());
                keys(out, List.of(k.lock(), k.fence())).put("lock", k.lock()).put("fence", k.fence());
            }
            case "ratelimit.keys" -> {
                JsonNode id = in.get("request_id");
                RateLimiter rl = new RateLimiter(null, Keyspace.of(in.get("namespace").asText()), Vectors.policy(in.get("limits")));
                RateLimiter.RateLimitKeys k = rl.keys(in.get("identity").asText(), id == null || id.isNull() ? null : id.asText());
                ObjectNode keys = F.objectNode();
                keys.put("request", k.request());
                keys.set("limits", F.arrayNode().addAll(k.limits().stream().map(F::textNode).toList()));
                List<String> all = new ArrayList<>(k.limits());
                if (k.request() != null) {
                    all.add(k.request());
                }
                out.set("keys", keys);
                out.put("slot", Keyspace.slot(all.get(0)));
            }
            case "idempotency.keys" -> {
                Idempotency idem = new Idempotency(null, Keyspace.of(in.get("namespace").asText()), IdempotencyConfig.defaults());
                String record = idem.keys(in.get("scope").asText(), Vectors.bytes(in.get("key"))).record();
                keys(out, List.of(record)).put("record", record);
            }
            case "semaphore.keys" -> {
                Semaphore.SemaphoreKeys k = new Semaphore(null, Keyspace.of(in.get("namespace").asText()), in.get("name").asText(), 1).keys();
                keys(out, List.of(k.permits())).put("permits", k.permits()).put("holders", k.holders()).put("fence", k.fence());
            }
            case "quota.keys" -> {
                JsonNode id = in.get("request_id");
                Quotas.QuotaKeys k = new Quotas(null, Keyspace.of(in.get("namespace").asText()), java.time.Duration.ofHours(1))
                        .keys(in.get("name").asText(), id == null || id.isNull() ? null : id.asText());
                keys(out, List.of(k.value())).put("value", k.value()).put("request", k.request());
            }
            case "dedup.keys" -> {
                String seen = new Dedup(null, Keyspace.of(in.get("namespace").asText())).keys(in.get("event_id").asText()).seen();
                keys(out, List.of(seen)).put("seen", seen);
            }
            case "queue.keys" -> {
                Queue q = new Queue(null, Keyspace.of(in.get("namespace").asText()), in.get("name").asText(), Queue.QueueConfig.defaults());
                Queue.QueueKeys k = q.keys();
                keys(out, List.of(k.due())).put("due", k.due()).put("inflight", k.inflight()).put("dead", k.dead())
                        .put("done", k.done()).put("meta", k.meta()).put("payload", k.payload()).put("errors", k.errors())
                        .put("claims", k.claims()).put("claim", q.claimKey(in.get("claim_id").asText()));
            }
            case "fenced.keys" -> {
                String fence = new FencedWrites(null, Keyspace.of(in.get("namespace").asText()), java.time.Duration.ofDays(7))
                        .keys(in.get("resource").asText()).fence();
                keys(out, List.of(fence)).put("fence", fence);
            }
            case "fenced.key" -> {
                String key = new FencedWrites(null, Keyspace.of(in.get("namespace").asText()), java.time.Duration.ofDays(7))
                        .key(in.get("resource").asText(), in.get("part").asText());
                out.put("key", key).put("slot", Keyspace.slot(key));
            }
            case "entries.keys" -> {
                List<EntryLimiter.Entry> entries = new ArrayList<>();
                in.get("entries").forEach(e -> entries.add(EntryLimiter.Entry.of(Vectors.limit(e.get("limit")),
                        e.get("identity").asText(), e.get("hits").asLong())));
                List<String> limits = new EntryLimiter(null, Keyspace.of(in.get("namespace").asText())).keys(in.get("tag").asText(), entries);
                keys(out, limits).set("limits", F.arrayNode().addAll(limits.stream().map(F::textNode).toList()));
            }
            default -> throw new AssertionError("no derivation for " + call);
        }
        return out;
    }

    private static ObjectNode keys(ObjectNode out, List<String> all) {
        ObjectNode keys = F.objectNode();
        out.set("keys", keys);
        out.put("slot", Keyspace.slot(all.get(0)));
        return keys;
    }
}
