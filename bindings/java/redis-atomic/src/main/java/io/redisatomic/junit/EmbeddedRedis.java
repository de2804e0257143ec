package io.redisatomic.junit;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A redis-server process this test run owns: started on a free 127.0.0.1 port in its own
 * directory, stopped (by its pid) on {@link #close()}.
 */
public final class EmbeddedRedis implements AutoCloseable {
    private final Process process;
    private final int port;
    private final Path dir;
    private final boolean tls;

    private EmbeddedRedis(Process process, int port, Path dir, boolean tls) {
        this.process = process;
        this.port = port;
        this.dir = dir;
        this.tls = tls;
    }

    /** The binary: {@code $REDIS_ATOMIC_SERVER_BIN}, else {@code redis-server}. */
    public static String binary() {
        String bin = System.getenv("REDIS_ATOMIC_SERVER_BIN");
        return bin == null || bin.isEmpty() ? "redis-server" : bin;
    }

    /** Starts a server with {@code extraArgs} (e.g. {@code --maxmemory 10mb}) and waits until it accepts connections. */
    public static EmbeddedRedis start(String... extraArgs) throws IOException, InterruptedException {
        int port = freePort();
        return launch(binary(), port, false, List.of("--port", Integer.toString(port)), extraArgs);
    }

    /**
     * Starts a TLS-only server ({@code rediss://}) with {@code cert} and {@code key} (PEM), trusting
     * client certificates signed by {@code ca}; {@code --tls-auth-clients yes|no|optional} and
     * more may follow in {@code extraArgs}. The binary is {@code $REDIS_ATOMIC_TLS_SERVER_BIN},
     * else {@code redis-server}: not every server build has TLS (the pip-installed Valkey has none).
     */
    public static EmbeddedRedis startTls(Path cert, Path key, Path ca, String... extraArgs) throws IOException, InterruptedException {
        int port = freePort();
        String bin = System.getenv("REDIS_ATOMIC_TLS_SERVER_BIN");
        return launch(bin == null || bin.isEmpty() ? "redis-server" : bin, port, true, List.of("--port", "0", "--tls-port", Integer.toString(port), "--tls-cert-file",
                cert.toString(), "--tls-key-file", key.toString(), "--tls-ca-cert-file", ca.toString()), extraArgs);
    }

    private static EmbeddedRedis launch(String binary, int port, boolean tls, List<String> listen, String... extraArgs)
            throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("redis-atomic-junit");
        List<String> cmd = new java.util.ArrayList<>(List.of(binary));
        cmd.addAll(listen);
        cmd.addAll(List.of("--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString()));
        cmd.addAll(List.of(extraArgs));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("server.log").toFile()).start();
        EmbeddedRedis r = new EmbeddedRedis(p, port, dir, tls);
        r.awaitReady();
        return r;
    }

    /** A port that was free a moment ago (closed again: the server binds it). */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private void awaitReady() throws IOException, InterruptedException {
        for (int i = 0; i < 500; i++) {
            if (!process.isAlive()) {
                throw new IOException("redis-server exited: " + Files.readString(dir.resolve("server.log")));
            }
            try (Socket s = new Socket("127.0.0.1", port)) {
                if (tls) {
                    return; // listening; the TLS handshake is the client's to test
                }
                s.getOutputStream().write("PING\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                if (s.getInputStream().read() == '+') {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet: the readiness poll continues
            }
            process.waitFor(10, TimeUnit.MILLISECONDS);
        }
        close();
        throw new IOException("redis-server did not accept connections on port " + port);
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:<port>} ({@code rediss://} for a TLS server). */
    public String url() {
        return (tls ? "rediss" : "redis") + "://127.0.0.1:" + port;
    }

    /** The server's process id (to stop it with SIGSTOP in a fault test). */
    public long pid() {
        return process.pid();
    }

    /** Sends {@code signal} (e.g. {@code STOP}, {@code CONT}) to the server. */
    public void signal(String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IOException("kill -" + signal + " " + pid() + " failed");
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        File[] files = dir.toFile().listFiles();
        for (File f : files == null ? new File[0] : files) {
            f.delete();
        }
        dir.toFile().delete();
    }
}
