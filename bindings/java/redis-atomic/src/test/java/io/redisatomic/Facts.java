package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;

/** Checks an error against a vector's expected code and facts. */
final class Facts {
    private Facts() {
    }

    static void expect(JsonNode c, RedisAtomicException e) {
        String id = c.get("id").asText();
        assertEquals(c.get("error").asText(), e.code(), id);
        assertEquals(c.get("nothing_ran").asBoolean(), e.nothingRan(), id + " nothing_ran");
        assertEquals(c.get("transient").asBoolean(), e.isTransient(), id + " transient");
        assertEquals(c.get("retry_safe").asBoolean(), e.retrySafe(), id + " retry_safe");
        assertEquals(c.get("timed_out").asBoolean(), e.timedOut(), id + " timed_out");
        if (c.has("attempts")) {
            assertEquals(c.get("attempts").asInt(), ((OutcomeUnknownException) e).attempts(), id + " attempts");
        }
    }
}
