/**
 * Spring Boot auto-configuration of redis-atomic: its own at-most-once client from
 * {@code spring.data.redis.*}, the primitives as beans, an Idempotency-Key filter and a
 * {@link io.redisatomic.spring.RateLimited} interceptor with the HTTP layer's semantics and
 * headers, Micrometer metrics and an Actuator health indicator.
 */
package io.redisatomic.spring;
