package io.redisatomic.spring;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * {@code application/problem+json} answers (RFC 9457), the shape the HTTP layers of the Rust
 * library use: {@code type} about:blank, {@code title} from the status, {@code status},
 * {@code detail}.
 */
final class Problems {
    private Problems() {
    }

    static void send(HttpServletResponse res, int status, String title, String detail) throws IOException {
        res.setStatus(status);
        res.setContentType("application/problem+json");
        String body = "{\"type\":\"about:blank\",\"title\":" + json(title) + ",\"status\":" + status
                + ",\"detail\":" + json(detail) + "}";
        res.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
    }

    /** Whole seconds of {@code millis}, rounded up, at least 1 (what Retry-After carries). */
    static long seconds(long millis) {
        return Math.max(1, (millis + 999) / 1000);
    }

    private static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
