/**
 * The Java library's driver for {@code redis-atomic verify --driver} (docs/verify.md, "Drivers"):
 * JSON lines on stdin and stdout, one request at a time, through the library's public API as a
 * user following docs/java.md would use it — rows {@code lock} (fences), {@code quota},
 * {@code ratelimit-sl} (a sliding log) and {@code ratelimit-win} (a fixed window).
 *
 * <p>It never resends anything itself: the library's own {@link RetryPolicy} (the default) retries
 * what it makes retry-safe — an acquisition with the caller's token, an add with a request id —
 * and nothing else, and Lettuce under it must not replay on its own. So what the harness judges
 * is the library's retry rules. Under a fault the timeout is the in-process rows' 200 ms, so a
 * stall or a lost reply becomes an unknown outcome. A bug of this driver is not an answer: the
 * exception ends the process with its stack trace on stderr. It lives with the library's tests
 * (compiled by {@code mvn verify}, run on the test classpath) so it adds nothing to the build.
 */
package io.redisatomic.driver;
