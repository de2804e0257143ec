package io.redisatomic;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/** A plain connection to a test server, to read what ran there (keys, command counts). */
final class ServerStats implements AutoCloseable {
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> conn;

    ServerStats(String url) {
        client = RedisClient.create(url);
        conn = client.connect();
    }

    RedisCommands<String, String> redis() {
        return conn.sync();
    }

    /** How many times {@code command} (lower case, e.g. "evalsha") ran since the last reset. */
    long calls(String command) {
        for (String line : conn.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":calls=")) {
                return Long.parseLong(line.substring(line.indexOf('=') + 1, line.indexOf(',')));
            }
        }
        return 0;
    }

    void resetStats() {
        conn.sync().configResetstat();
    }

    @Override
    public void close() {
        conn.close();
        client.shutdown();
    }
}
