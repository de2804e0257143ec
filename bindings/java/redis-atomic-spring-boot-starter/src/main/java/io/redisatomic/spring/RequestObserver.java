package io.redisatomic.spring;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Sees every request the filter or the interceptor decided, with its final status and duration
 * ({@link MicrometerObserver} when Micrometer is present; nothing otherwise).
 */
@FunctionalInterface
public interface RequestObserver {
    RequestObserver NONE = (req, status, nanos) -> { };

    void observe(HttpServletRequest request, int status, long nanos);
}
