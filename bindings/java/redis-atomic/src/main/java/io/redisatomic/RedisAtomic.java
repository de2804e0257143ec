package io.redisatomic;

import io.redisatomic.scripts.ScriptDef;
import io.redisatomic.scripts.ScriptRunner;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A client: runs this library's scripts (and a user's own generated ones, as their
 * {@link ScriptRunner}) over its own at-most-once Lettuce connection. Thread-safe; close it when
 * done. Build the primitives from it: {@link #locks(String)}, {@link #rateLimiter(String, Policy)}.
 *
 * <p>Hand it only connections it builds: a Lettuce connection with auto-reconnect on replays
 * commands that were written but unanswered when it dropped, so a non-retry-safe script could run
 * twice without anyone knowing.
 */
public final class RedisAtomic implements ScriptRunner, AutoCloseable {
    private final Link link;
    private final Runner runner;
    private final Options options;
    private final java.util.concurrent.ConcurrentLinkedQueue<Link.Dedicated> casIdle =
            new java.util.concurrent.ConcurrentLinkedQueue<>();

    private RedisAtomic(Link link, Options options) {
        this.link = link;
        this.options = options;
        this.runner = new Runner(link, options.retry(), options.delivery(), io.redisatomic.scripts.LockAcquire.DEF.library());
    }

    /** Connects to {@code url} with the default options. */
    public static RedisAtomic connect(String url) {
        return connect(url, Options.defaults());
    }

    /**
     * Connects to {@code url} ({@code redis://}, {@code rediss://}, {@code redis+sentinel://},
     * {@code rediss+sentinel://}) and checks the server answers. A failure is
     * {@link ConnectionException} (nothing ran), {@link TlsException} or {@link BadArgumentException}.
     */
    public static RedisAtomic connect(String url, Options options) {
        return new RedisAtomic(Link.standalone(url, options), options);
    }

    /** Connects to a Redis Cluster through any of its nodes' URLs. */
    public static RedisAtomic connectCluster(List<String> urls, Options options) {
        return new RedisAtomic(Link.cluster(urls, options), options);
    }

    /** Checks the server answers (PING); a failure is the library's exception. */
    public void ping() {
        join(pingAsync());
    }

    public CompletableFuture<Void> pingAsync() {
        try {
            return link.async().ping().toCompletableFuture().<Void>thenApply(pong -> null)
                    .exceptionallyCompose(e -> CompletableFuture.failedFuture(Classify.failure(e)));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(Classify.failure(e));
        }
    }

    /** How this client's built-in scripts reach the server now: FCALL of the deployed library, or EVALSHA. */
    public Delivery delivery() {
        return runner.delivery(io.redisatomic.scripts.LockAcquire.DEF);
    }

    /** Whether it runs over a Redis Cluster. */
    public boolean isCluster() {
        return link.isCluster();
    }

    public Options options() {
        return options;
    }

    /** Locks under {@code namespace}. */
    public Locks locks(String namespace) {
        return new Locks(this, Keyspace.of(namespace));
    }

    /** A semaphore of {@code capacity} permits named {@code name} under {@code namespace}. */
    public Semaphore semaphore(String namespace, String name, int capacity) {
        return new Semaphore(this, Keyspace.of(namespace), name, capacity);
    }

    /** The job queue {@code name} under {@code namespace}, with {@code config}. */
    public Queue queue(String namespace, String name, Queue.QueueConfig config) {
        return new Queue(this, Keyspace.of(namespace), name, config);
    }

    /** Fenced writes under {@code namespace} (fence records kept 7 days after the last write). */
    public FencedWrites fencedWrites(String namespace) {
        return new FencedWrites(this, Keyspace.of(namespace), Duration.ofDays(7));
    }

    /** The entry limiter under {@code namespace}. */
    public EntryLimiter entryLimiter(String namespace) {
        return new EntryLimiter(this, Keyspace.of(namespace));
    }

    /** Optimistic transactions (WATCH … EXEC) on connections of their own: 16 attempts within 2 s. */
    public Cas cas() {
        return new Cas(this, new RetryPolicy(16, Duration.ofSeconds(2), Duration.ofMillis(1), Duration.ofMillis(50)), casIdle);
    }

    /** First-sighting detection under {@code namespace}. */
    public Dedup dedup(String namespace) {
        return new Dedup(this, Keyspace.of(namespace));
    }

    /** Bounded counters under {@code namespace} (request ids remembered 1 h). */
    public Quotas quotas(String namespace) {
        return new Quotas(this, Keyspace.of(namespace), Duration.ofHours(1));
    }

    /** Idempotency keys under {@code namespace}, with the default settings. */
    public Idempotency idempotency(String namespace) {
        return new Idempotency(this, Keyspace.of(namespace), IdempotencyConfig.defaults());
    }

    /** A rate limiter of {@code policy} under {@code namespace}. */
    public RateLimiter rateLimiter(String namespace, Policy policy) {
        return new RateLimiter(this, Keyspace.of(namespace), policy);
    }

    /** Runs {@code def} under the retry policy, retry-safe as its header says; the raw reply. */
    @Override
    public Object run(ScriptDef def, List<String> keys, List<Object> args) {
        return join(runAsync(def, keys, args, def.retrySafe()));
    }

    /** The asynchronous twin of {@link #run}, with the call's own retry safety. */
    public CompletableFuture<Object> runAsync(ScriptDef def, List<String> keys, List<?> args, boolean retrySafe) {
        return runner.run(def, keys, args, retrySafe);
    }

    /** Sends a plain command by {@code send} under the retry policy (retried after an unknown outcome only if {@code retrySafe}). */
    <T> CompletableFuture<T> commandAsync(java.util.function.Function<io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands<byte[], byte[]>,
            java.util.concurrent.CompletionStage<T>> send, boolean retrySafe) {
        return runner.command(() -> send.apply(link.async()), retrySafe);
    }

    /** The result of {@code f}, or its failure as the library's exception (never a wrapper). */
    static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw Classify.failure(e);
        }
    }

    Link link() {
        return link;
    }

    @Override
    public void close() {
        link.close();
    }
}
