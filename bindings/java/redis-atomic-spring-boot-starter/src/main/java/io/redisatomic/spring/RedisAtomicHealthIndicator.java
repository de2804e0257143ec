package io.redisatomic.spring;

import io.redisatomic.RedisAtomic;
import io.redisatomic.RedisAtomicException;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** Up when the server answers PING on the starter's own connection; down with the error's code otherwise. */
public class RedisAtomicHealthIndicator implements HealthIndicator {
    private final RedisAtomic client;

    public RedisAtomicHealthIndicator(RedisAtomic client) {
        this.client = client;
    }

    @Override
    public Health health() {
        try {
            client.ping();
            return Health.up().withDetail("cluster", client.isCluster()).build();
        } catch (RedisAtomicException e) {
            return Health.down().withDetail("code", e.code()).withDetail("error", String.valueOf(e.getMessage())).build();
        }
    }
}
