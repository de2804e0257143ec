package io.redisatomic.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Starts a real {@code redis-server} for the annotated test class (one per class, stopped after
 * it) and injects it as a {@link EmbeddedRedis} parameter. The binary is
 * {@code $REDIS_ATOMIC_SERVER_BIN} when set (e.g. a valkey-server), else {@code redis-server} on
 * the PATH. No persistence; it listens on 127.0.0.1 only, on a free port.
 */
@Target({ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ExtendWith(RedisServerExtension.class)
public @interface RedisServer {
}
