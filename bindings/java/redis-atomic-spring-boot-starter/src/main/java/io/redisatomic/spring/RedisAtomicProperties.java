package io.redisatomic.spring;

import io.redisatomic.Algorithm;
import io.redisatomic.Limit;
import io.redisatomic.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The starter's own settings ({@code redis-atomic.*}): the namespace of every key, the
 * Idempotency-Key filter, and the rate-limit policies that {@link RateLimited} names.
 */
@ConfigurationProperties("redis-atomic")
public class RedisAtomicProperties {
    private String namespace = "app";
    private final IdempotencySettings idempotency = new IdempotencySettings();
    private Map<String, PolicySettings> rateLimits = new LinkedHashMap<>();
    private Map<String, Integer> semaphores = new LinkedHashMap<>();
    private Map<String, QueueSettings> queues = new LinkedHashMap<>();

    /** One queue's settings (the rest are {@link io.redisatomic.Queue.QueueConfig#defaults()}). */
    public static class QueueSettings {
        private int maxDeliveries = 5;
        private int maxPayloadBytes = 64 * 1024;

        io.redisatomic.Queue.QueueConfig config() {
            io.redisatomic.Queue.QueueConfig d = io.redisatomic.Queue.QueueConfig.defaults();
            return new io.redisatomic.Queue.QueueConfig(maxDeliveries, d.dedupWindow(), d.maxDeadLetters(),
                    d.deadLetterRetention(), maxPayloadBytes, d.claimIdTtl());
        }

        public int getMaxDeliveries() {
            return maxDeliveries;
        }

        public void setMaxDeliveries(int maxDeliveries) {
            this.maxDeliveries = maxDeliveries;
        }

        public int getMaxPayloadBytes() {
            return maxPayloadBytes;
        }

        public void setMaxPayloadBytes(int maxPayloadBytes) {
            this.maxPayloadBytes = maxPayloadBytes;
        }
    }

    /** The Idempotency-Key filter: off unless enabled. */
    public static class IdempotencySettings {
        private boolean enabled;
        private boolean required = true;
        private List<String> methods = new ArrayList<>(List.of("POST", "PATCH"));
        private List<String> pathPatterns = new ArrayList<>(List.of("/**"));
        private Duration ttl = Duration.ofSeconds(30);
        private Duration resultTtl = Duration.ofHours(24);
        private int maxBodyBytes = 1 << 20;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isRequired() {
            return required;
        }

        public void setRequired(boolean required) {
            this.required = required;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public List<String> getPathPatterns() {
            return pathPatterns;
        }

        public void setPathPatterns(List<String> pathPatterns) {
            this.pathPatterns = pathPatterns;
        }

        public Duration getTtl() {
            return ttl;
        }

        public void setTtl(Duration ttl) {
            this.ttl = ttl;
        }

        public Duration getResultTtl() {
            return resultTtl;
        }

        public void setResultTtl(Duration resultTtl) {
            this.resultTtl = resultTtl;
        }

        public int getMaxBodyBytes() {
            return maxBodyBytes;
        }

        public void setMaxBodyBytes(int maxBodyBytes) {
            this.maxBodyBytes = maxBodyBytes;
        }
    }

    /** What a limited handler does when Redis cannot decide: run unlimited, or answer 503. */
    public enum Unavailable { FAIL_OPEN, FAIL_CLOSED }

    /** One policy: its limits (all or nothing), where the key comes from, and what to do when Redis is down. */
    public static class PolicySettings {
        private List<LimitSettings> limits = new ArrayList<>();
        private String keyHeader;
        private Unavailable unavailable;

        Policy policy() {
            return new Policy(limits.stream().map(LimitSettings::limit).toList());
        }

        public List<LimitSettings> getLimits() {
            return limits;
        }

        public void setLimits(List<LimitSettings> limits) {
            this.limits = limits;
        }

        /** The request header whose value is the rate-limited key (null: the client's address). */
        public String getKeyHeader() {
            return keyHeader;
        }

        public void setKeyHeader(String keyHeader) {
            this.keyHeader = keyHeader;
        }

        /** Required: fail-open or fail-closed, stated by the application. */
        public Unavailable getUnavailable() {
            return unavailable;
        }

        public void setUnavailable(Unavailable unavailable) {
            this.unavailable = unavailable;
        }
    }

    /** One limit, as {@link Limit}: algorithm (kebab- or snake-case), limit, period, optional burst and name. */
    public static class LimitSettings {
        private String algorithm;
        private long limit;
        private Duration period;
        private Long burst;
        private String name;

        Limit limit() {
            Limit l = Limit.of(Algorithm.parse(algorithm), limit, period);
            l = burst == null ? l : l.withBurst(burst);
            return name == null ? l : l.named(name);
        }

        public String getAlgorithm() {
            return algorithm;
        }

        public void setAlgorithm(String algorithm) {
            this.algorithm = algorithm;
        }

        public long getLimit() {
            return limit;
        }

        public void setLimit(long limit) {
            this.limit = limit;
        }

        public Duration getPeriod() {
            return period;
        }

        public void setPeriod(Duration period) {
            this.period = period;
        }

        public Long getBurst() {
            return burst;
        }

        public void setBurst(Long burst) {
            this.burst = burst;
        }

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public IdempotencySettings getIdempotency() {
        return idempotency;
    }

    public Map<String, PolicySettings> getRateLimits() {
        return rateLimits;
    }

    public void setRateLimits(Map<String, PolicySettings> rateLimits) {
        this.rateLimits = rateLimits;
    }

    /** Semaphores by name: {@code redis-atomic.semaphores.<name>=<capacity>}. */
    public Map<String, Integer> getSemaphores() {
        return semaphores;
    }

    public void setSemaphores(Map<String, Integer> semaphores) {
        this.semaphores = semaphores;
    }

    /** Job queues by name: {@code redis-atomic.queues.<name>.max-deliveries=...}. */
    public Map<String, QueueSettings> getQueues() {
        return queues;
    }

    public void setQueues(Map<String, QueueSettings> queues) {
        this.queues = queues;
    }
}
