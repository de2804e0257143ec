package io.redisatomic.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.servlet.http.HttpServletRequest;
import java.util.concurrent.TimeUnit;
import org.springframework.web.servlet.HandlerMapping;

/**
 * The metrics the HTTP face ({@code redis-atomic serve}) exports, under the same names:
 * {@code redis_atomic_http_requests_total{route,method,status}} and
 * {@code redis_atomic_http_request_seconds{route,method}} (Micrometer spells them
 * {@code redis.atomic.http.requests} and {@code redis.atomic.http.request}; the Prometheus
 * registry renders the suffixes). The route is the handler's pattern, never the path, so
 * identifiers never become label values.
 */
public final class MicrometerObserver implements RequestObserver {
    private final MeterRegistry registry;

    public MicrometerObserver(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void observe(HttpServletRequest request, int status, long nanos) {
        Object pattern = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        String route = pattern == null ? "unmatched" : pattern.toString();
        registry.counter("redis.atomic.http.requests", "route", route, "method", request.getMethod(),
                "status", Integer.toString(status)).increment();
        Timer.builder("redis.atomic.http.request").tags("route", route, "method", request.getMethod())
                .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }
}
