package io.redisatomic.spring;

import io.redisatomic.CostExceedsBurstException;
import io.redisatomic.Decision;
import io.redisatomic.Limit;
import io.redisatomic.RateLimiter;
import io.redisatomic.RedisAtomicException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Rate-limits handlers marked {@link RateLimited}, answering as draft-ietf-httpapi-ratelimit-headers
 * describes, with the header spellings of the Rust library's HTTP layer: every answer carries
 * {@code RateLimit-Policy} ({@code "name";q=<limit>;w=<seconds>}) and {@code RateLimit}
 * ({@code "name";r=<remaining>;t=<seconds>}); a refused request gets 429 with Retry-After and a
 * problem+json body, and the handler does not run; a cost above every burst is 400; when Redis
 * cannot decide, the policy's explicit choice: fail-open runs the handler unlimited, fail-closed
 * answers 503 with {@code Retry-After: 1} (never 429: the client was not over its quota).
 */
public class RateLimitInterceptor implements HandlerInterceptor {
    private static final String START = RateLimitInterceptor.class.getName() + ".start";
    private final Map<String, Limiter> limiters;
    private final RequestObserver observer;

    /** A policy's limiter and settings. */
    public record Limiter(RateLimiter limiter, RedisAtomicProperties.PolicySettings settings) {
    }

    public RateLimitInterceptor(Map<String, Limiter> limiters, RequestObserver observer) {
        this.limiters = limiters;
        this.observer = observer;
    }

    @Override
    public boolean preHandle(HttpServletRequest req, HttpServletResponse res, Object handler) throws Exception {
        RateLimited marked = handler instanceof HandlerMethod m ? annotation(m) : null;
        if (marked == null) {
            return true;
        }
        Limiter l = limiters.get(marked.value());
        if (l == null) {
            throw new IllegalStateException("no policy redis-atomic.rate-limits." + marked.value());
        }
        req.setAttribute(START, System.nanoTime());
        List<Limit> limits = l.limiter().policy().limits();
        res.setHeader("RateLimit-Policy", policyHeader(limits));
        String header = l.settings().getKeyHeader();
        String key = header == null ? req.getRemoteAddr() : req.getHeader(header);
        if (key == null || key.isEmpty()) {
            return refuse(req, res, 400, "Bad Request", "the rate-limit key header " + header + " is missing");
        }
        Decision d;
        try {
            d = l.limiter().consume(key, marked.cost());
        } catch (CostExceedsBurstException e) {
            return refuse(req, res, 400, "Bad Request", e.getMessage());
        } catch (RedisAtomicException e) {
            if (l.settings().getUnavailable() == RedisAtomicProperties.Unavailable.FAIL_OPEN) {
                return true;
            }
            res.setHeader("Retry-After", "1");
            return refuse(req, res, 503, "Service Unavailable", "rate limiter unavailable; retry later");
        }
        res.setHeader("RateLimit", rateLimitHeader(limits, d));
        if (d instanceof Decision.Limited limited) {
            res.setHeader("Retry-After", Long.toString(Problems.seconds(limited.retryAfter().toMillis())));
            return refuse(req, res, 429, "Too Many Requests", "rate limit exceeded");
        }
        return true;
    }

    @Override
    public void afterCompletion(HttpServletRequest req, HttpServletResponse res, Object handler, Exception ex) {
        if (req.getAttribute(START) instanceof Long start) {
            observer.observe(req, res.getStatus(), System.nanoTime() - start);
        }
    }

    private boolean refuse(HttpServletRequest req, HttpServletResponse res, int status, String title, String detail)
            throws java.io.IOException {
        Problems.send(res, status, title, detail);
        return false;
    }

    private static RateLimited annotation(HandlerMethod m) {
        RateLimited onMethod = m.getMethodAnnotation(RateLimited.class);
        return onMethod != null ? onMethod : m.getBeanType().getAnnotation(RateLimited.class);
    }

    /** {@code "name";q=<limit>[;w=<seconds>], ...} (w only for a whole-second period). */
    static String policyHeader(List<Limit> limits) {
        return limits.stream().map(l -> "\"" + l.name() + "\";q=" + l.limit()
                + (l.period().getNano() == 0 ? ";w=" + l.period().getSeconds() : ""))
                .collect(Collectors.joining(", "));
    }

    /** {@code "name";r=<remaining>;t=<seconds>, ...}: t is when it admits this request again if it refused, else when it is full. */
    static String rateLimitHeader(List<Limit> limits, Decision d) {
        return IntStream.range(0, Math.min(limits.size(), d.limits().size())).mapToObj(i -> {
            Decision.LimitStatus s = d.limits().get(i);
            java.time.Duration t = s.retryAfter().isZero() ? s.resetAfter() : s.retryAfter();
            long secs = (t.toNanos() + 999_999_999L) / 1_000_000_000L;
            return "\"" + limits.get(i).name() + "\";r=" + s.remaining() + ";t=" + secs;
        }).collect(Collectors.joining(", "));
    }
}
