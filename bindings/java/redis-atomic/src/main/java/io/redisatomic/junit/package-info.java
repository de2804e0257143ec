/**
 * Testing with a real server: annotate a test class with {@link io.redisatomic.junit.RedisServer}
 * and take an {@link io.redisatomic.junit.EmbeddedRedis} parameter. Real servers, not mocks, because
 * the semantics under test (atomic scripts, expiry on the server's clock) are the server's.
 */
package io.redisatomic.junit;
