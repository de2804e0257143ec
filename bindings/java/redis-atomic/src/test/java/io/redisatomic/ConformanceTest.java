package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.redisatomic.scripts.Reply;
import io.redisatomic.scripts.Scripts;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The shared vectors' offline sections: key derivation, spellings, reply decoding, and the
 * classification of server error replies. Every case of a call this library has is checked; the
 * calls it does not have yet are named in {@link #NOT_YET}, so a new primitive must take its cases.
 */
class ConformanceTest {
    /** Key calls and spelling kinds of primitives and options this library does not offer yet. */
    static final Set<String> NOT_YET = Set.of();

    @Test
    void keys() throws Exception {
        Set<String> seen = new TreeSet<>();
        List<String> failures = new ArrayList<>();
        for (JsonNode c : Vectors.load().get("keys")) {
            String call = c.get("call").asText();
            if (NOT_YET.contains(call)) {
                seen.add(call);
                continue;
            }
            try {
                JsonNode got = Keys.derive(call, c.get("input"));
                check(failures, c, got);
            } catch (BadArgumentException e) {
                if (!c.has("error") || !c.get("error").asText().equals(e.code())) {
                    failures.add(c.get("id").asText() + ": refused (" + e.getMessage() + ")");
                }
            }
        }
        assertEquals(List.of(), failures);
        assertEquals(new TreeSet<>(NOT_YET), seen, "every call named in NOT_YET has cases");
    }

    private static void check(List<String> failures, JsonNode c, JsonNode got) {
        if (c.has("error")) {
            failures.add(c.get("id").asText() + ": expected " + c.get("error") + ", got " + got);
            return;
        }
        for (String field : List.of("key", "keys", "slot")) {
            if (c.has(field) && !c.get(field).equals(got.get(field))) {
                failures.add(c.get("id").asText() + ": " + field + " expected " + c.get(field) + ", got " + got.get(field));
            }
        }
    }

    @Test
    void spellings() throws Exception {
        for (JsonNode c : Vectors.load().get("spellings")) {
            if (NOT_YET.contains(c.get("kind").asText())) {
                continue;
            }
            String input = c.get("input").asText();
            boolean delivery = c.get("kind").asText().equals("delivery");
            if (c.has("error")) {
                BadArgumentException e = assertThrows(BadArgumentException.class,
                        () -> { if (delivery) { Delivery.parse(input); } else { Algorithm.parse(input); } }, c.get("id").asText());
                assertEquals(c.get("error").asText(), e.code());
            } else if (delivery) {
                assertEquals(c.get("canonical").asText(), Delivery.parse(input).canonical(), c.get("id").asText());
            } else {
                Algorithm a = Algorithm.parse(input);
                assertEquals(c.get("canonical").asText(), a.canonical(), c.get("id").asText());
                assertEquals(c.get("code").asText(), a.code(), c.get("id").asText());
            }
        }
    }

    @Test
    void replies() throws Exception {
        List<String> failures = new ArrayList<>();
        for (JsonNode c : Vectors.load().get("replies")) {
            String id = c.get("id").asText();
            JsonNode raw = c.get("raw");
            try {
                if (raw.isObject() && raw.has("error")) {
                    RedisAtomicException e = Classify.serverError(raw.get("error").asText());
                    expectError(failures, c, e.code());
                    continue;
                }
                Reply r = Scripts.decode(c.get("script").asText(), Vectors.raw(raw));
                if (c.has("error")) {
                    failures.add(id + ": expected " + c.get("error") + ", decoded " + r);
                } else if (!r.outcome().equals(c.get("status").asText()) || !same(fields(r), c.get("fields"))) {
                    failures.add(id + ": expected " + c.get("status") + " " + c.get("fields") + ", got " + r.outcome() + " " + fields(r));
                }
            } catch (io.redisatomic.scripts.BadReplyException e) {
                expectError(failures, c, Classify.failure(e).code());
            }
        }
        assertEquals(List.of(), failures);
    }

    /** Equal as JSON values (numbers compared by value, not by node type). */
    private static boolean same(JsonNode a, JsonNode b) {
        return a.equals((x, y) -> x.isNumber() && y.isNumber() ? Long.compare(x.asLong(), y.asLong()) : x.equals(y) ? 0 : 1, b);
    }

    private static void expectError(List<String> failures, JsonNode c, String code) {
        if (!c.has("error") || !c.get("error").asText().equals(code)) {
            failures.add(c.get("id").asText() + ": expected " + c.get("status") + c.get("error") + ", got error " + code);
        }
    }

    /** A decoded record's fields as the vectors spell them (snake_case; durations keep their unit). */
    private static JsonNode fields(Object record) {
        var out = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        for (RecordComponent rc : record.getClass().getRecordComponents()) {
            String name = rc.getName().equals("outcomeValue") ? "outcome" : snake(rc.getName());
            out.set(name, json(get(rc, record)));
        }
        return out;
    }

    private static Object get(RecordComponent rc, Object record) {
        try {
            return rc.getAccessor().invoke(record);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static JsonNode json(Object v) {
        var f = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
        if (v == null) {
            return f.nullNode();
        }
        if (v instanceof Long n) {
            return f.numberNode(n);
        }
        if (v instanceof Boolean b) {
            return f.booleanNode(b);
        }
        if (v instanceof String s) {
            return f.textNode(s);
        }
        if (v instanceof byte[] b) {
            String s = new String(b, StandardCharsets.UTF_8);
            return Arrays.equals(s.getBytes(StandardCharsets.UTF_8), b) ? f.textNode(s)
                    : f.objectNode().put("hex", java.util.HexFormat.of().formatHex(b));
        }
        if (v instanceof List<?> list) {
            var a = f.arrayNode();
            list.forEach(x -> a.add(x != null && x.getClass().isRecord() ? fields(x) : json(x)));
            return a;
        }
        if (v.getClass().isRecord()) {
            return fields(v);
        }
        fail("unexpected field value " + v.getClass());
        return null;
    }

    private static String snake(String camel) {
        return camel.replaceAll("([A-Z])", "_$1").toLowerCase(java.util.Locale.ROOT);
    }

    @Test
    void serverErrors() throws Exception {
        for (JsonNode c : Vectors.load().get("errors")) {
            if (!c.has("reply")) {
                continue;
            }
            RedisAtomicException e = Classify.serverError(c.get("reply").get("error").asText());
            Facts.expect(c, e);
        }
    }
}
