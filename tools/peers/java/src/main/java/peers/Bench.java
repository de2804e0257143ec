package peers;

import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.redisatomic.Decision;
import io.redisatomic.Limit;
import io.redisatomic.Lock;
import io.redisatomic.Locks;
import io.redisatomic.Policy;
import io.redisatomic.RateLimiter;
import io.redisatomic.RedisAtomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.redisson.Redisson;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One Java client of tools/peer-bench.py for --seconds: --concurrency threads, each in a loop of
 * blocking operations (a lock cycle on resources of its own, never refused; or a rate-limit
 * decision for an identity drawn from --identities, limits never reached). Prints one JSON line:
 * operations/s, the share of one core the server used (INFO cpu), the runtime and the packages.
 */
public final class Bench {
    interface Op {
        boolean run(int thread, long i) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new java.util.HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        int port = Integer.parseInt(a.get("port"));
        double seconds = Double.parseDouble(a.getOrDefault("seconds", "5"));
        int concurrency = Integer.parseInt(a.getOrDefault("concurrency", "16"));
        int identities = Integer.parseInt(a.getOrDefault("identities", "1000"));
        String client = a.get("client");
        String url = "redis://127.0.0.1:" + port;
        List<AutoCloseable> close = new ArrayList<>();
        Op op = op(client, url, identities, close);
        for (int t = 0; t < concurrency; t++) { // warm-up: connections made, scripts loaded
            op.run(t, 0);
        }
        RedisClient stats = RedisClient.create(url);
        StatefulRedisConnection<String, String> sc = stats.connect(StringCodec.UTF8);
        double cpu0 = serverCpu(sc);
        LongAdder done = new LongAdder();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < concurrency; t++) {
            int thread = t;
            Thread th = new Thread(() -> {
                try {
                    for (long i = 1; System.nanoTime() < end; i++) {
                        if (!op.run(thread, i)) {
                            throw new IllegalStateException("refused: the workload never refuses");
                        }
                        done.increment();
                    }
                } catch (Exception e) {
                    e.printStackTrace();
                    System.exit(1);
                }
            });
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join();
        }
        double wall = (System.nanoTime() - start) / 1e9;
        double cpu = (serverCpu(sc) - cpu0) / wall;
        sc.close();
        stats.shutdown();
        for (AutoCloseable c : close) {
            c.close();
        }
        System.out.printf("{\"rate\": %.1f, \"server_cpu\": %.4f, \"runtime\": \"java %s\", \"packages\": {\"redisson\": \"3.52.0\", \"bucket4j\": \"8.14.0\", \"lettuce\": \"7.7.0\"}}%n",
                done.sum() / wall, cpu, System.getProperty("java.version"));
        System.exit(0);
    }

    private static double serverCpu(StatefulRedisConnection<String, String> c) {
        double s = 0;
        for (String line : c.sync().info("cpu").split("\r?\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                s += Double.parseDouble(line.substring(line.indexOf(':') + 1));
            }
        }
        return s;
    }

    private static Op op(String client, String url, int identities, List<AutoCloseable> close) {
        Duration ttl = Duration.ofSeconds(30);
        switch (client) {
            case "ra-lock" -> {
                RedisAtomic ra = RedisAtomic.connect(url);
                close.add(ra);
                Locks locks = ra.locks("bench");
                return (t, i) -> {
                    if (locks.acquire("r-" + t, ttl) instanceof Lock l) {
                        l.release();
                        return true;
                    }
                    return false;
                };
            }
            case "ra-gcra" -> {
                RedisAtomic ra = RedisAtomic.connect(url);
                close.add(ra);
                RateLimiter rl = ra.rateLimiter("bench", Policy.of(Limit.gcra(1_000_000_000L, Duration.ofMinutes(1))));
                return (t, i) -> rl.consume("id-" + ThreadLocalRandom.current().nextInt(identities), 1) instanceof Decision.Allowed;
            }
            case "redisson-lock", "redisson-fenced", "redisson-rl" -> {
                Config cfg = new Config();
                cfg.useSingleServer().setAddress(url);
                RedissonClient r = Redisson.create(cfg);
                close.add(r::shutdown);
                if (client.equals("redisson-lock")) {
                    return (t, i) -> {
                        RLock l = r.getLock("bench:lock:" + t);
                        boolean got = l.tryLock(0, 30, TimeUnit.SECONDS);
                        if (got) {
                            l.unlock();
                        }
                        return got;
                    };
                }
                if (client.equals("redisson-fenced")) {
                    return (t, i) -> {
                        RFencedLock l = r.getFencedLock("bench:fenced:" + t);
                        Long token = l.tryLockAndGetToken(0, 30, TimeUnit.SECONDS);
                        if (token != null) {
                            l.unlock();
                        }
                        return token != null;
                    };
                }
                RRateLimiter[] limiters = new RRateLimiter[identities];
                return (t, i) -> {
                    int id = ThreadLocalRandom.current().nextInt(identities);
                    RRateLimiter l = limiters[id];
                    if (l == null) {
                        l = r.getRateLimiter("bench:rl:" + id);
                        l.trySetRate(RateType.OVERALL, 1_000_000_000L, Duration.ofMinutes(1));
                        limiters[id] = l;
                    }
                    return l.tryAcquire();
                };
            }
            case "bucket4j" -> {
                RedisClient c = RedisClient.create(url);
                StatefulRedisConnection<String, byte[]> conn = c.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
                close.add(c::shutdown);
                ProxyManager<String> pm = Bucket4jLettuce.casBasedBuilder(conn).build();
                BucketConfiguration config = BucketConfiguration.builder()
                        .addLimit(Bandwidth.builder().capacity(1_000_000_000L).refillGreedy(1_000_000_000L, Duration.ofMinutes(1)).build()).build();
                return (t, i) -> pm.builder().build("bench:b4j:" + ThreadLocalRandom.current().nextInt(identities), () -> config)
                        .tryConsume(1);
            }
            default -> throw new IllegalArgumentException("unknown --client " + client);
        }
    }
}
