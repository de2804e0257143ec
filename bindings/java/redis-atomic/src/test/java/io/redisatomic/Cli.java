package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/** The redis-atomic binary the tests run: {@code $REDIS_ATOMIC_BIN}, else the workspace's {@code target/debug/redis-atomic}. */
final class Cli {
    private Cli() {
    }

    static Path bin() {
        String env = System.getenv("REDIS_ATOMIC_BIN");
        Path bin = Path.of(env != null && !env.isEmpty() ? env : "../../../target/debug/redis-atomic");
        assertTrue(Files.isExecutable(bin), "no redis-atomic binary at " + bin.toAbsolutePath()
                + ": build it (cargo build -p redis-atomic-cli) or set REDIS_ATOMIC_BIN");
        return bin;
    }

    /** Runs the binary with {@code args} to its end; it must exit 0. */
    static void run(String... args) throws Exception {
        String[] command = new String[args.length + 1];
        command[0] = bin().toString();
        System.arraycopy(args, 0, command, 1, args.length);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, p.waitFor(), String.join(" ", command));
    }
}
