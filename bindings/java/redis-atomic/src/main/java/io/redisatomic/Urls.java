package io.redisatomic;

import io.lettuce.core.RedisURI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * The URL forms the library accepts, as the Rust library does: {@code redis://} and
 * {@code rediss://} (Lettuce's own parser: credentials, database, {@code ?} options), and
 * {@code redis+sentinel://[user:password@]host:port[,host:port...]/service[/db]} (and
 * {@code rediss+sentinel://}), which Lettuce spells otherwise and is translated here.
 */
final class Urls {
    static final int DEFAULT_SENTINEL_PORT = 26379;

    private Urls() {
    }

    static RedisURI parse(String url) {
        if (url == null) {
            throw new BadArgumentException("the URL must not be null");
        }
        try {
            if (url.startsWith("redis+sentinel://") || url.startsWith("rediss+sentinel://")) {
                return sentinel(url);
            }
            if (url.startsWith("redis://") || url.startsWith("rediss://") || url.startsWith("redis-socket://")) {
                return RedisURI.create(url);
            }
        } catch (IllegalArgumentException e) {
            throw new BadArgumentException("bad URL: " + e.getMessage(), e);
        }
        throw new BadArgumentException("unsupported URL scheme (redis://, rediss://, redis+sentinel://, rediss+sentinel://)");
    }

    private static RedisURI sentinel(String url) {
        boolean tls = url.startsWith("rediss+");
        String rest = url.substring(url.indexOf("://") + 3);
        RedisURI.Builder b = RedisURI.builder();
        int at = rest.lastIndexOf('@');
        String user = null;
        String password = null;
        if (at >= 0) {
            String cred = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = cred.indexOf(':');
            user = colon < 0 ? null : decode(cred.substring(0, colon));
            password = decode(colon < 0 ? cred : cred.substring(colon + 1));
        }
        String[] hostsAndPath = rest.split("/", 3);
        if (hostsAndPath.length < 2 || hostsAndPath[1].isEmpty()) {
            throw new BadArgumentException("a sentinel URL names its service: redis+sentinel://host:port/service");
        }
        for (String hp : hostsAndPath[0].split(",")) {
            int colon = hp.lastIndexOf(':');
            String host = colon < 0 ? hp : hp.substring(0, colon);
            int port = colon < 0 ? DEFAULT_SENTINEL_PORT : Integer.parseInt(hp.substring(colon + 1));
            b.withSentinel(host, port);
        }
        b.withSentinelMasterId(hostsAndPath[1]);
        if (hostsAndPath.length == 3 && !hostsAndPath[2].isEmpty()) {
            b.withDatabase(Integer.parseInt(hostsAndPath[2]));
        }
        if (password != null) {
            b = user == null ? b.withPassword(password.toCharArray()) : b.withAuthentication(user, password);
        }
        return b.withSsl(tls).build();
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
