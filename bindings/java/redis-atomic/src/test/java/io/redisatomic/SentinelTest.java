package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.redisatomic.junit.EmbeddedRedis;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code redis+sentinel://}: the primary found through a Sentinel monitoring it (started for the class). */
class SentinelTest {
    private static EmbeddedRedis primary;
    private static Process sentinel;
    private static int sentinelPort;

    @BeforeAll
    static void start() throws Exception {
        primary = EmbeddedRedis.start();
        sentinelPort = EmbeddedRedis.freePort();
        Path dir = Files.createTempDirectory("redis-atomic-sentinel");
        Path conf = dir.resolve("sentinel.conf");
        Files.writeString(conf, "port " + sentinelPort + "\nbind 127.0.0.1\ndir " + dir + "\n"
                + "sentinel monitor main 127.0.0.1 " + primary.port() + " 1\n");
        sentinel = new ProcessBuilder(EmbeddedRedis.binary(), conf.toString(), "--sentinel")
                .redirectErrorStream(true).redirectOutput(dir.resolve("sentinel.log").toFile()).start();
        for (int i = 0; i < 500 && !answers(sentinelPort); i++) {
            assertFalse(sentinel.waitFor(10, TimeUnit.MILLISECONDS), "the sentinel exited");
        }
    }

    private static boolean answers(int port) {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            return s.getInputStream().read() == '+';
        } catch (IOException notYet) {
            return false;
        }
    }

    @AfterAll
    static void stop() throws Exception {
        sentinel.destroy();
        sentinel.waitFor();
        primary.close();
    }

    @Test
    void theSentinelUrlReachesThePrimary() {
        try (RedisAtomic ra = RedisAtomic.connect("redis+sentinel://127.0.0.1:" + sentinelPort + "/main")) {
            Lock l = (Lock) ra.locks("st").acquire("r", Duration.ofSeconds(5));
            assertInstanceOf(LockState.Locked.class, ra.locks("st").inspect("r"));
            assertEquals(new Release.Released(l.fence()), l.release());
        }
        try (ServerStats s = new ServerStats(primary.url())) {
            assertEquals(1L, s.redis().exists("st:lock:v1:{r}:fence"), "the lock's keys are on the primary");
        }
    }
}
