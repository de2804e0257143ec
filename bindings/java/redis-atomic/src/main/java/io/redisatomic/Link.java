package io.redisatomic;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.ByteArrayCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The library's own Lettuce connection, at-most-once ({@link AtMostOnce}: Lettuce reconnects by
 * itself but never replays a command, and rejects commands while disconnected). When the
 * connection is found closed, the next call opens a new one (nothing is resent: the library's
 * retry rules decide).
 * A {@link ReentrantLock}, not {@code synchronized}, guards the swap, so virtual threads never pin.
 */
final class Link implements AutoCloseable {
    private final AbstractRedisClient client;
    /** The client of {@link #dedicated} connections: the same options, but it never reconnects (see there). */
    private final AbstractRedisClient single;
    private final RedisURI uri;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile StatefulConnection<byte[], byte[]> current;

    private Link(AbstractRedisClient client, AbstractRedisClient single, RedisURI uri) {
        this.client = client;
        this.single = single;
        this.uri = uri;
    }

    static Link standalone(String url, Options o) {
        RedisURI uri = Urls.parse(url);
        uri.setTimeout(o.timeout());
        SslOptions ssl = ssl(o); // read the certificate files once, for both clients
        RedisClient client = RedisClient.create(uri);
        client.setOptions(AtMostOnce.options(ClientOptions.builder(), o.timeout(), ssl, true).build());
        RedisClient single = RedisClient.create(client.getResources(), uri);
        single.setOptions(AtMostOnce.options(ClientOptions.builder(), o.timeout(), ssl, false).build());
        return new Link(client, single, uri).opened();
    }

    static Link cluster(List<String> urls, Options o) {
        if (urls.isEmpty()) {
            throw new BadArgumentException("a cluster needs at least one node URL");
        }
        List<RedisURI> uris = urls.stream().map(Urls::parse).peek(u -> u.setTimeout(o.timeout())).toList();
        SslOptions ssl = ssl(o); // read the certificate files once, for both clients
        RedisClusterClient client = RedisClusterClient.create(uris);
        client.setOptions(AtMostOnce.options(ClusterClientOptions.builder(), o.timeout(), ssl, true)
                .topologyRefreshOptions(AtMostOnce.topologyRefresh()).build());
        RedisClusterClient single = RedisClusterClient.create(client.getResources(), uris);
        single.setOptions(AtMostOnce.options(ClusterClientOptions.builder(), o.timeout(), ssl, false)
                .topologyRefreshOptions(AtMostOnce.topologyRefresh()).build());
        return new Link(client, single, null).opened();
    }

    private static SslOptions ssl(Options o) {
        SslOptions.Builder b = SslOptions.builder().jdkSslProvider();
        try {
            if (o.caCertificate() != null) {
                b.trustManager(o.caCertificate().toFile());
            }
            if (o.clientCertificate() != null) {
                b.keyManager(o.clientCertificate().toFile(), o.clientKey().toFile(), null);
            }
            return b.build();
        } catch (RuntimeException e) {
            throw new TlsException("TLS set-up failed: " + e.getMessage(), e);
        }
    }

    private Link opened() {
        try {
            connection();
            return this;
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The open connection, a new one when the last was closed; ConnectionException if none can be made. */
    StatefulConnection<byte[], byte[]> connection() {
        StatefulConnection<byte[], byte[]> c = current;
        if (c != null && c.isOpen()) {
            return c;
        }
        lock.lock();
        try {
            c = current;
            if (c == null || !c.isOpen()) {
                if (c != null) {
                    c.closeAsync();
                }
                current = c = connect();
            }
            return c;
        } finally {
            lock.unlock();
        }
    }

    private StatefulConnection<byte[], byte[]> connect() {
        if (client instanceof RedisClusterClient cluster) {
            StatefulRedisClusterConnection<byte[], byte[]> c = connecting(() -> cluster.connect(ByteArrayCodec.INSTANCE));
            openPrimaries(c);
            return c;
        }
        return connecting(() -> ((RedisClient) client).connect(ByteArrayCodec.INSTANCE, uri));
    }

    /**
     * Opens the connection to every primary now rather than at its slots' first call: under
     * {@code REJECT_COMMANDS} Lettuce refuses (not sent) a command for a node whose connection is
     * still being opened, so a cluster's first calls were refused while each node's connection
     * opened. Keyed as the slot routing keys them (write intent, host and port). Best effort: a
     * primary that cannot be reached now is opened by the first call for its slots.
     */
    private static void openPrimaries(StatefulRedisClusterConnection<byte[], byte[]> c) {
        List<CompletableFuture<?>> opening = new ArrayList<>();
        for (RedisClusterNode node : c.getPartitions()) {
            if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                RedisURI at = node.getUri();
                opening.add(c.getConnectionAsync(at.getHost(), at.getPort()).exceptionally(e -> null));
            }
        }
        CompletableFuture.allOf(opening.toArray(CompletableFuture[]::new)).join();
    }

    /**
     * A connection of its own to the server holding {@code key}, for state a connection carries
     * (WATCH, MULTI): never shared. Standalone or Sentinel: a new connection ({@code owner} is
     * itself). Cluster: a new cluster connection ({@code owner}) and its connection to the primary
     * of the key's slot, as the owner learned the slot map. These connections never reconnect: a
     * connection that came back would have lost its WATCH (an EXEC would then commit unchecked)
     * or its MULTI (the rest of the writes would run one by one); once dropped, a dedicated
     * connection stays closed and its call fails.
     */
    record Dedicated(StatefulRedisConnection<byte[], byte[]> conn, StatefulConnection<byte[], byte[]> owner) {
        boolean poolable() {
            return conn == owner;
        }

        void close() {
            owner.closeAsync();
        }
    }

    Dedicated dedicated(String key) {
        if (single instanceof RedisClient standalone) {
            StatefulRedisConnection<byte[], byte[]> c = connecting(() -> standalone.connect(ByteArrayCodec.INSTANCE, uri));
            return new Dedicated(c, c);
        }
        RedisClusterClient cluster = (RedisClusterClient) single;
        StatefulRedisClusterConnection<byte[], byte[]> owner = connecting(() -> cluster.connect(ByteArrayCodec.INSTANCE));
        try {
            int slot = io.lettuce.core.cluster.SlotHash.getSlot(key.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            String node = owner.getPartitions().getPartitionBySlot(slot).getNodeId();
            return new Dedicated(connecting(() -> owner.getConnection(node)), owner);
        } catch (RuntimeException e) {
            owner.closeAsync();
            throw e;
        }
    }

    /** After a MOVED or ASK: learn the cluster's slot map again (nothing to do standalone). */
    void refreshTopology() {
        if (client instanceof RedisClusterClient cluster) {
            cluster.refreshPartitionsAsync();
            ((RedisClusterClient) single).refreshPartitionsAsync();
        }
    }

    private static <C> C connecting(java.util.function.Supplier<C> open) {
        try {
            return open.get();
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            boolean timedOut = root instanceof java.net.SocketTimeoutException
                    || root.getClass().getSimpleName().contains("Timeout");
            if (root instanceof javax.net.ssl.SSLException || root instanceof java.security.GeneralSecurityException) {
                throw new TlsException("TLS handshake failed: " + root.getMessage(), e);
            }
            throw new ConnectionException("could not connect: " + root.getMessage(), timedOut, e);
        }
    }

    /**
     * The commands of the open connection (standalone, Sentinel's primary, or the cluster's
     * slot-routing connection: one interface serves all three).
     */
    @SuppressWarnings("unchecked")
    RedisClusterAsyncCommands<byte[], byte[]> async() {
        StatefulConnection<byte[], byte[]> c = connection();
        if (c instanceof StatefulRedisClusterConnection<?, ?> cluster) {
            return ((StatefulRedisClusterConnection<byte[], byte[]>) cluster).async();
        }
        return ((StatefulRedisConnection<byte[], byte[]>) c).async();
    }

    boolean isCluster() {
        return client instanceof RedisClusterClient;
    }

    @Override
    public void close() {
        StatefulConnection<byte[], byte[]> c = current;
        if (c != null) {
            c.close();
        }
        single.shutdown(); // first: it shares the resources the main client owns
        client.shutdown();
    }
}
