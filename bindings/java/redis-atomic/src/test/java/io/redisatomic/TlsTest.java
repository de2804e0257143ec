package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.redisatomic.junit.EmbeddedRedis;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rediss://} with the caller's CA and client certificate, against a TLS-only redis-server
 * that requires client certificates; throwaway certificates made with openssl.
 */
class TlsTest {
    private static Path dir;
    private static EmbeddedRedis server;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("redis-atomic-tls");
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=test-ca");
        Files.writeString(dir.resolve("ext"), "subjectAltName=IP:127.0.0.1\n");
        for (String who : List.of("server", "client")) {
            openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", who + ".key", "-out", who + ".csr", "-subj", "/CN=127.0.0.1");
            openssl("x509", "-req", "-in", who + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", who + ".pem", "-days", "1", "-extfile", "ext");
        }
        server = EmbeddedRedis.startTls(dir.resolve("server.pem"), dir.resolve("server.key"), dir.resolve("ca.pem"),
                "--tls-auth-clients", "yes");
    }

    private static void openssl(String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertEquals(0, p.waitFor(), "openssl " + String.join(" ", args));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void withTheCaAndAClientCertificateTheCallsRun() {
        Options o = Options.defaults().withCaCertificate(dir.resolve("ca.pem"))
                .withClientCertificate(dir.resolve("client.pem"), dir.resolve("client.key"));
        try (RedisAtomic ra = RedisAtomic.connect(server.url(), o)) {
            Lock l = (Lock) ra.locks("tls").acquire("r", Duration.ofSeconds(5));
            assertInstanceOf(LockState.Locked.class, ra.locks("tls").inspect("r"));
            assertEquals(new Release.Released(l.fence()), l.release());
        }
    }

    @Test
    void withoutTheCaOrTheClientCertificateNothingConnects() {
        RedisAtomicException untrusted = assertThrows(RedisAtomicException.class, () -> RedisAtomic.connect(server.url()));
        assertEquals("tls", untrusted.code(), untrusted.toString());
        Options noClientCert = Options.defaults().withCaCertificate(dir.resolve("ca.pem"));
        RedisAtomicException refused = assertThrows(RedisAtomicException.class,
                () -> RedisAtomic.connect(server.url(), noClientCert).locks("tls").inspect("r"));
        assertEquals("tls", refused.code(), refused.toString());
    }
}
