package io.redisatomic.spring;

import io.redisatomic.Begin;
import io.redisatomic.Claim;
import io.redisatomic.Failure;
import io.redisatomic.Fingerprint;
import io.redisatomic.Idempotency;
import io.redisatomic.RedisAtomicException;
import io.redisatomic.Response;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.util.AntPathMatcher;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The {@code Idempotency-Key} header with the IETF draft's semantics
 * (draft-ietf-httpapi-idempotency-key-header), as the Rust library's HTTP layer answers it, for
 * the configured methods and paths:
 * no key where one is required, or a malformed one: 400; the same key still being processed: 409
 * with Retry-After; the same key with another request (method, path and query, body): 422; the
 * same key already processed: its stored response with {@code Idempotent-Replayed: true};
 * otherwise the request runs once, its claim watched, and its response is stored (except 5xx,
 * which frees the key so a retry runs again). If Redis cannot be reached the request is refused
 * with 503 and never runs: running it without the claim could run it twice. Errors are
 * {@code application/problem+json}.
 */
public class IdempotencyKeyFilter extends OncePerRequestFilter {
    /** The request header carrying the key. */
    public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    /** The response header marking a replay. */
    public static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
    private static final List<String> REPLAY_HEADERS = List.of("Content-Type", "Location", "Content-Location");
    private static final int MAX_KEY_LEN = 255;
    private final Idempotency idempotency;
    private final RedisAtomicProperties.IdempotencySettings settings;
    private final RequestObserver observer;
    private final AntPathMatcher paths = new AntPathMatcher();

    public IdempotencyKeyFilter(Idempotency idempotency, RedisAtomicProperties.IdempotencySettings settings,
            RequestObserver observer) {
        this.idempotency = idempotency;
        this.settings = settings;
        this.observer = observer;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        return !settings.getMethods().contains(request.getMethod())
                || settings.getPathPatterns().stream().noneMatch(p -> paths.match(p, path));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws ServletException, IOException {
        long start = System.nanoTime();
        try {
            decide(req, res, chain);
        } finally {
            observer.observe(req, res.getStatus(), System.nanoTime() - start);
        }
    }

    private void decide(HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws ServletException, IOException {
        String key = req.getHeader(IDEMPOTENCY_KEY);
        if (key == null) {
            if (settings.isRequired()) {
                Problems.send(res, 400, "Bad Request", "Idempotency-Key header is required for this request");
            } else {
                chain.doFilter(req, res);
            }
            return;
        }
        key = key.strip();
        if (key.isEmpty() || key.length() > MAX_KEY_LEN || !key.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
            Problems.send(res, 400, "Bad Request", "Idempotency-Key must be 1..=255 visible ASCII characters");
            return;
        }
        byte[] body = CachedBodyRequest.read(req, settings.getMaxBodyBytes());
        if (body == null) {
            Problems.send(res, 413, "Payload Too Large", "the request body is over the limit");
            return;
        }
        String target = req.getRequestURI() + (req.getQueryString() == null ? "" : "?" + req.getQueryString());
        Fingerprint fp = Fingerprint.of(req.getMethod().getBytes(StandardCharsets.UTF_8),
                target.getBytes(StandardCharsets.UTF_8), body);
        Begin begin;
        try {
            begin = idempotency.begin("default", key.getBytes(StandardCharsets.UTF_8), fp);
        } catch (RedisAtomicException e) {
            logger.warn("idempotency store unavailable; request refused", e);
            Problems.send(res, 503, "Service Unavailable", "idempotency store unavailable; retry later");
            return;
        }
        if (begin instanceof Claim claim) {
            execute(claim, new CachedBodyRequest(req, body), res, chain);
        } else if (begin instanceof Begin.InProgress p) {
            res.setHeader("Retry-After", Long.toString(Problems.seconds(p.retryAfter().toMillis())));
            Problems.send(res, 409, "Conflict", "a request with this Idempotency-Key is still being processed");
        } else if (begin instanceof Begin.Replay r) {
            replay(r.stored().response(), res);
        } else {
            Problems.send(res, 422, "Unprocessable Content", "Idempotency-Key was already used with a different request");
        }
    }

    /** Runs the request once under the claim (watched), then stores its response or frees the key. */
    private void execute(Claim claim, HttpServletRequest req, HttpServletResponse res, FilterChain chain)
            throws ServletException, IOException {
        ContentCachingResponseWrapper buffered = new ContentCachingResponseWrapper(res);
        claim.watch();
        try {
            chain.doFilter(req, buffered);
        } catch (ServletException | IOException | RuntimeException e) {
            end(() -> claim.fail(new Failure.Retryable()));
            throw e;
        }
        int status = buffered.getStatus();
        if (status >= 500) {
            end(() -> claim.fail(new Failure.Retryable()));
        } else {
            Response stored = Response.of(status, buffered.getContentAsByteArray());
            for (String name : REPLAY_HEADERS) {
                String v = name.equals("Content-Type") ? buffered.getContentType() : buffered.getHeader(name);
                if (v != null) {
                    stored = stored.withHeader(name.toLowerCase(java.util.Locale.ROOT), v);
                }
            }
            Response toStore = stored;
            end(() -> claim.complete(toStore));
        }
        buffered.copyBodyToResponse();
    }

    /** Ends a claim; a failure to store is logged, never thrown at the client that got its answer. */
    private void end(Runnable end) {
        try {
            end.run();
        } catch (RedisAtomicException e) {
            logger.warn("idempotency result not stored", e);
        }
    }

    private static void replay(Response stored, HttpServletResponse res) throws IOException {
        res.setStatus(stored.status());
        for (Response.Header h : stored.headers()) {
            res.addHeader(h.name(), new String(h.value(), StandardCharsets.UTF_8));
        }
        res.setHeader(IDEMPOTENT_REPLAYED, "true");
        byte[] body = stored.bodyBytes();
        if (body != null) {
            res.getOutputStream().write(body);
        }
    }
}
