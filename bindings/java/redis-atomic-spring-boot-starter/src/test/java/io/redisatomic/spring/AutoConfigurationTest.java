package io.redisatomic.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.redisatomic.Acquire;
import io.redisatomic.Cas;
import io.redisatomic.Dedup;
import io.redisatomic.EntryLimiter;
import io.redisatomic.FencedWrites;
import io.redisatomic.Idempotency;
import io.redisatomic.Lock;
import io.redisatomic.Locks;
import io.redisatomic.Queue;
import io.redisatomic.Quotas;
import io.redisatomic.RedisAtomic;
import io.redisatomic.junit.EmbeddedRedis;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The auto-configuration on real servers: its client from {@code spring.data.redis.*} (host and
 * port, a URL, a password), the primitives as beans (named semaphores and queues from
 * {@code redis-atomic.*}), backing off from the application's own client. Side effects are read
 * back from the server's keys.
 */
class AutoConfigurationTest {
    private static EmbeddedRedis open;
    private static EmbeddedRedis guarded;
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RedisAtomicAutoConfiguration.class));

    @BeforeAll
    static void start() throws Exception {
        open = EmbeddedRedis.start();
        guarded = EmbeddedRedis.start();
        RedisClient c = RedisClient.create(guarded.url());
        try (StatefulRedisConnection<String, String> conn = c.connect()) {
            conn.sync().configSet("requirepass", "s3cret pass");
        } finally {
            c.shutdown();
        }
    }

    @AfterAll
    static void stop() {
        open.close();
        guarded.close();
    }

    private static long keys(EmbeddedRedis server, String pattern, String password) {
        io.lettuce.core.RedisURI.Builder uri = io.lettuce.core.RedisURI.builder().withHost("127.0.0.1").withPort(server.port());
        RedisClient c = RedisClient.create((password == null ? uri : uri.withPassword(password.toCharArray())).build());
        try (StatefulRedisConnection<String, String> conn = c.connect()) {
            return conn.sync().keys(pattern).size();
        } finally {
            c.shutdown();
        }
    }

    @Test
    void hostAndPortGiveEveryPrimitiveAsABean() {
        runner.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + open.port(),
                "redis-atomic.namespace=beans", "redis-atomic.semaphores.workers=2", "redis-atomic.queues.mail.max-deliveries=3")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    for (Class<?> bean : List.of(RedisAtomic.class, Locks.class, Idempotency.class, FencedWrites.class, Dedup.class,
                            Quotas.class, EntryLimiter.class, Cas.class, RedisAtomicAutoConfiguration.RateLimiters.class,
                            RedisAtomicAutoConfiguration.Semaphores.class, RedisAtomicAutoConfiguration.Queues.class,
                            RedisAtomicHealthIndicator.class)) {
                        assertThat(ctx).hasSingleBean(bean);
                    }
                    Lock l = (Lock) ctx.getBean(Locks.class).acquire("r", Duration.ofSeconds(30));
                    assertEquals(1, keys(open, "beans:lock:v1:{r}", null), "the lock under the configured namespace");
                    l.release();
                    var workers = ctx.getBean(RedisAtomicAutoConfiguration.Semaphores.class).get("workers");
                    assertInstanceOf(io.redisatomic.Permit.class, workers.acquire(Duration.ofSeconds(30)));
                    assertInstanceOf(io.redisatomic.Permit.class, workers.acquire(Duration.ofSeconds(30)));
                    assertInstanceOf(io.redisatomic.Full.class, workers.acquire(Duration.ofSeconds(30)), "capacity 2");
                    Queue mail = ctx.getBean(RedisAtomicAutoConfiguration.Queues.class).get("mail");
                    mail.enqueue("m1", new byte[] {1}, Duration.ZERO);
                    assertEquals(1, mail.stats().ready());
                    assertEquals(1, keys(open, "beans:queue:v1:{mail}:due", null));
                });
    }

    @Test
    void aUrlWithAPasswordAndAPasswordPropertyBothConnect() {
        String url = "redis://:s3cret%20pass@127.0.0.1:" + guarded.port();
        runner.withPropertyValues("spring.data.redis.url=" + url, "redis-atomic.namespace=url").run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertInstanceOf(Lock.class, ctx.getBean(Locks.class).acquire("a", Duration.ofSeconds(30)));
        });
        runner.withPropertyValues("spring.data.redis.port=" + guarded.port(), "spring.data.redis.password=s3cret pass",
                "redis-atomic.namespace=pw").run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertInstanceOf(Lock.class, ctx.getBean(Locks.class).acquire("a", Duration.ofSeconds(30)));
                });
        assertEquals(1, keys(guarded, "url:lock:v1:{a}", "s3cret pass"));
        assertEquals(1, keys(guarded, "pw:lock:v1:{a}", "s3cret pass"));
        runner.withPropertyValues("spring.data.redis.port=" + guarded.port()).run(ctx -> assertThat(ctx).hasFailed());
    }

    @Test
    void itBacksOffWhenTheApplicationDefinesItsOwnClient() {
        try (RedisAtomic mine = RedisAtomic.connect(open.url())) {
            runner.withBean(RedisAtomic.class, () -> mine).withPropertyValues("spring.data.redis.port=1").run(ctx -> {
                assertThat(ctx).hasNotFailed();
                assertSame(mine, ctx.getBean(RedisAtomic.class), "port 1 was never dialled: the application's client serves");
                assertInstanceOf(Acquire.class, ctx.getBean(Locks.class).acquire("own", Duration.ofSeconds(30)));
            });
        }
    }
}
