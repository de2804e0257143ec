package io.redisatomic;

import io.redisatomic.junit.EmbeddedRedis;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** One client per test server, shared by the tests of a class and closed after it. */
final class Clients {
    private static final Map<Integer, RedisAtomic> CLIENTS = new ConcurrentHashMap<>();

    private Clients() {
    }

    static RedisAtomic shared(EmbeddedRedis server) {
        return CLIENTS.computeIfAbsent(server.port(), p -> RedisAtomic.connect(server.url()));
    }

    static void closeAll() {
        CLIENTS.values().forEach(RedisAtomic::close);
        CLIENTS.clear();
    }
}
