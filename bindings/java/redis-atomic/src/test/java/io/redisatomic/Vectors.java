package io.redisatomic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The shared conformance vectors (conformance/vectors.json, or {@code $REDIS_ATOMIC_VECTORS}) and
 * their conventions: byte strings, raw replies, limits.
 */
final class Vectors {
    private Vectors() {
    }

    static JsonNode load() throws IOException {
        String env = System.getenv("REDIS_ATOMIC_VECTORS");
        Path p = env != null && !env.isEmpty() ? Path.of(env) : Path.of("../../../conformance/vectors.json");
        return new ObjectMapper().readTree(p.toFile());
    }

    /** A JSON byte string: a string's UTF-8 bytes, or {@code {"hex": ...}}. */
    static byte[] bytes(JsonNode n) {
        return n.isObject() ? HexFormat.of().parseHex(n.get("hex").asText()) : n.asText().getBytes(StandardCharsets.UTF_8);
    }

    /** A raw reply as Lettuce hands it over: Long, byte[], List, null (errors are handled by the caller). */
    static Object raw(JsonNode n) {
        if (n.isNull()) {
            return null;
        }
        if (n.isIntegralNumber()) {
            return n.asLong();
        }
        if (n.isArray()) {
            List<Object> out = new ArrayList<>();
            n.forEach(x -> out.add(raw(x)));
            return out;
        }
        return bytes(n);
    }

    static Limit limit(JsonNode l) {
        Limit limit = Limit.of(Algorithm.parse(l.get("algorithm").asText()), l.get("limit").asLong(),
                Duration.ofMillis(l.get("period_ms").asLong()));
        if (l.has("burst")) {
            limit = limit.withBurst(l.get("burst").asLong());
        }
        return l.has("name") ? limit.named(l.get("name").asText()) : limit;
    }

    static Policy policy(JsonNode limits) {
        List<Limit> out = new ArrayList<>();
        limits.forEach(l -> out.add(limit(l)));
        return new Policy(out);
    }
}
