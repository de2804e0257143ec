package io.redisatomic;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Settings of a {@link RedisAtomic} client. Immutable; {@code with...} returns a changed copy.
 *
 * @param timeout deadline of one request (and of a connect); past it the outcome is unknown
 * @param retry retries of requests that may be retried (refusals; unknown outcomes of retry-safe calls)
 * @param caCertificate PEM file of the CA to trust for {@code rediss://} (null: the JDK's trust store)
 * @param clientCertificate PEM certificate chain presented for {@code rediss://} (null: none)
 * @param clientKey PEM PKCS#8 private key of {@code clientCertificate}
 * @param delivery how scripts reach the server; null (the default): {@code FUNCTIONS} when the
 *     library's deployed Function library of this version is on the server at connect, else {@code EVAL}
 */
public record Options(Duration timeout, RetryPolicy retry, Path caCertificate, Path clientCertificate, Path clientKey,
        Delivery delivery) {
    /** Without a delivery: detected at connect. */
    public Options(Duration timeout, RetryPolicy retry, Path caCertificate, Path clientCertificate, Path clientKey) {
        this(timeout, retry, caCertificate, clientCertificate, clientKey, null);
    }

    public Options {
        Durations.millis("timeout", timeout, Duration.ofHours(1));
        if (retry == null) {
            throw new BadArgumentException("retry policy must not be null");
        }
        if ((clientCertificate == null) != (clientKey == null)) {
            throw new BadArgumentException("a client certificate needs its key, and a key its certificate");
        }
    }

    /** The library's defaults: 1 s per request, {@link RetryPolicy#defaults()}, no TLS files. */
    public static Options defaults() {
        return new Options(Duration.ofSeconds(1), RetryPolicy.defaults(), null, null, null);
    }

    public Options withTimeout(Duration t) {
        return new Options(t, retry, caCertificate, clientCertificate, clientKey, delivery);
    }

    public Options withRetry(RetryPolicy r) {
        return new Options(timeout, r, caCertificate, clientCertificate, clientKey, delivery);
    }

    /** Trust this CA (PEM) for {@code rediss://}. */
    public Options withCaCertificate(Path ca) {
        return new Options(timeout, retry, ca, clientCertificate, clientKey, delivery);
    }

    /** Present this client certificate chain and key (PEM) for {@code rediss://}. */
    public Options withClientCertificate(Path certificate, Path key) {
        return new Options(timeout, retry, caCertificate, certificate, key, delivery);
    }

    /** Always this delivery ({@code FUNCTIONS}: FCALL, falling back to EVALSHA for a call whose function is not deployed). */
    public Options withDelivery(Delivery d) {
        return new Options(timeout, retry, caCertificate, clientCertificate, clientKey, d);
    }
}
