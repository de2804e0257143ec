package io.redisatomic.spring;

import io.redisatomic.IdempotencyConfig;
import io.redisatomic.Idempotency;
import io.redisatomic.Locks;
import io.redisatomic.Options;
import io.redisatomic.RedisAtomic;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The starter's beans: its own at-most-once {@link RedisAtomic} client built from
 * {@code spring.data.redis.*} (never the application's Lettuce connection, which replays
 * unanswered commands after a reconnect), the primitives, and, in a servlet web application, the
 * Idempotency-Key filter (when enabled) and the {@link RateLimited} interceptor. Micrometer
 * metrics and an Actuator health indicator join when their libraries are present.
 */
@AutoConfiguration
@EnableConfigurationProperties({SpringDataRedis.class, RedisAtomicProperties.class})
public class RedisAtomicAutoConfiguration {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public RedisAtomic redisAtomic(SpringDataRedis redis) {
        return redis.connect(Options.defaults());
    }

    @Bean
    @ConditionalOnMissingBean
    public Locks redisAtomicLocks(RedisAtomic client, RedisAtomicProperties props) {
        return client.locks(props.getNamespace());
    }

    @Bean
    @ConditionalOnMissingBean
    public Idempotency redisAtomicIdempotency(RedisAtomic client, RedisAtomicProperties props) {
        RedisAtomicProperties.IdempotencySettings s = props.getIdempotency();
        return client.idempotency(props.getNamespace())
                .withConfig(IdempotencyConfig.defaults().withTtl(s.getTtl()).withResultTtl(s.getResultTtl())
                        .withMaxResponseBytes(s.getMaxBodyBytes() + 4096));
    }

    /** The semaphores of {@code redis-atomic.semaphores} (name → capacity), by name. */
    @Bean
    @ConditionalOnMissingBean
    public Semaphores redisAtomicSemaphores(RedisAtomic client, RedisAtomicProperties props) {
        return new Semaphores(byName(props.getSemaphores(), (name, capacity) -> client.semaphore(props.getNamespace(), name, capacity)));
    }

    /** The job queues of {@code redis-atomic.queues}, by name. */
    @Bean
    @ConditionalOnMissingBean
    public Queues redisAtomicQueues(RedisAtomic client, RedisAtomicProperties props) {
        return new Queues(byName(props.getQueues(), (name, q) -> client.queue(props.getNamespace(), name, q.config())));
    }

    private static <S, T> Map<String, T> byName(Map<String, S> settings, java.util.function.BiFunction<String, S, T> make) {
        Map<String, T> out = new LinkedHashMap<>();
        settings.forEach((name, s) -> out.put(name, make.apply(name, s)));
        return out;
    }

    /** The named semaphores of the configuration. */
    public record Semaphores(Map<String, io.redisatomic.Semaphore> byName) {
        public io.redisatomic.Semaphore get(String name) { return byName.get(name); }
    }

    /** The named queues of the configuration. */
    public record Queues(Map<String, io.redisatomic.Queue> byName) {
        public io.redisatomic.Queue get(String name) { return byName.get(name); }
    }

    /** The primitives that take only the namespace (and CAS, which takes none). */
    @Bean @ConditionalOnMissingBean
    public io.redisatomic.FencedWrites redisAtomicFencedWrites(RedisAtomic c, RedisAtomicProperties p) { return c.fencedWrites(p.getNamespace()); }

    @Bean @ConditionalOnMissingBean
    public io.redisatomic.Dedup redisAtomicDedup(RedisAtomic c, RedisAtomicProperties p) { return c.dedup(p.getNamespace()); }

    @Bean @ConditionalOnMissingBean
    public io.redisatomic.Quotas redisAtomicQuotas(RedisAtomic c, RedisAtomicProperties p) { return c.quotas(p.getNamespace()); }

    @Bean @ConditionalOnMissingBean
    public io.redisatomic.EntryLimiter redisAtomicEntryLimiter(RedisAtomic c, RedisAtomicProperties p) { return c.entryLimiter(p.getNamespace()); }

    @Bean @ConditionalOnMissingBean
    public io.redisatomic.Cas redisAtomicCas(RedisAtomic c) { return c.cas(); }

    /** The rate limiters of {@code redis-atomic.rate-limits}, by policy name. */
    @Bean
    @ConditionalOnMissingBean
    public RateLimiters redisAtomicRateLimiters(RedisAtomic client, RedisAtomicProperties props) {
        Map<String, RateLimitInterceptor.Limiter> out = new LinkedHashMap<>();
        props.getRateLimits().forEach((name, p) -> {
            if (p.getUnavailable() == null) {
                throw new IllegalStateException("redis-atomic.rate-limits." + name
                        + ".unavailable must be set: fail-open or fail-closed");
            }
            out.put(name, new RateLimitInterceptor.Limiter(client.rateLimiter(props.getNamespace(), p.policy()), p));
        });
        return new RateLimiters(out);
    }

    /** The named rate limiters of the configuration. */
    public record RateLimiters(Map<String, RateLimitInterceptor.Limiter> byName) {
        public io.redisatomic.RateLimiter get(String name) {
            return byName.get(name).limiter();
        }
    }

    /** Micrometer, when present: the HTTP face's metric names. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean
        RequestObserver redisAtomicRequestObserver(ObjectProvider<io.micrometer.core.instrument.MeterRegistry> registry) {
            io.micrometer.core.instrument.MeterRegistry r = registry.getIfAvailable();
            return r == null ? RequestObserver.NONE : new MicrometerObserver(r);
        }
    }

    /** Actuator's health contributor, when present: the server answers PING. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class Health {
        @Bean
        @ConditionalOnMissingBean(name = "redisAtomicHealthIndicator")
        RedisAtomicHealthIndicator redisAtomicHealthIndicator(RedisAtomic client) {
            return new RedisAtomicHealthIndicator(client);
        }
    }

    /** The servlet web pieces: the filter and the interceptor. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = "org.springframework.web.servlet.config.annotation.WebMvcConfigurer")
    static class Web {
        @Bean
        @ConditionalOnProperty(prefix = "redis-atomic.idempotency", name = "enabled", havingValue = "true")
        IdempotencyKeyFilter redisAtomicIdempotencyKeyFilter(Idempotency idempotency, RedisAtomicProperties props,
                ObjectProvider<RequestObserver> observer) {
            return new IdempotencyKeyFilter(idempotency, props.getIdempotency(), observer.getIfAvailable(() -> RequestObserver.NONE));
        }

        @Bean
        WebMvcConfigurer redisAtomicRateLimitConfigurer(RateLimiters limiters, ObjectProvider<RequestObserver> observer) {
            RateLimitInterceptor interceptor = new RateLimitInterceptor(limiters.byName(),
                    observer.getIfAvailable(() -> RequestObserver.NONE));
            return new WebMvcConfigurer() {
                @Override
                public void addInterceptors(InterceptorRegistry registry) {
                    registry.addInterceptor(interceptor);
                }
            };
        }
    }
}
