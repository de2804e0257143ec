package io.redisatomic.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Rate-limits a controller method (or every method of a controller) by the policy
 * {@code redis-atomic.rate-limits.<value>}: refused requests get 429 with Retry-After, and every
 * answer carries RateLimit-Policy and RateLimit headers.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimited {
    /** The policy's name under {@code redis-atomic.rate-limits}. */
    String value();

    /** Units each request costs. */
    long cost() default 1;
}
