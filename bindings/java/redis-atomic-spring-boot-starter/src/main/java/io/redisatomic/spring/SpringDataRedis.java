package io.redisatomic.spring;

import io.redisatomic.Options;
import io.redisatomic.RedisAtomic;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The connection settings Spring Data Redis reads ({@code spring.data.redis.*}), bound again here
 * so the starter builds its own client from them: an at-most-once one (the library's), never the
 * application's Lettuce connection, which (Lettuce's default) replays unanswered commands after a
 * reconnect.
 * Only the fields that say where and how to connect are read; pool settings do not apply.
 */
@ConfigurationProperties("spring.data.redis")
public class SpringDataRedis {
    private String url;
    private String host = "localhost";
    private int port = 6379;
    private String username;
    private String password;
    private int database;
    private Duration timeout;
    private final Ssl ssl = new Ssl();
    private final Sentinel sentinel = new Sentinel();
    private final Cluster cluster = new Cluster();

    /** TLS to the server. */
    public static class Ssl {
        private boolean enabled;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Sentinel: the monitored primary's name and the Sentinels, host:port. */
    public static class Sentinel {
        private String master;
        private List<String> nodes = new ArrayList<>();

        public String getMaster() {
            return master;
        }

        public void setMaster(String master) {
            this.master = master;
        }

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }
    }

    /** Cluster: some of its nodes, host:port. */
    public static class Cluster {
        private List<String> nodes = new ArrayList<>();

        public List<String> getNodes() {
            return nodes;
        }

        public void setNodes(List<String> nodes) {
            this.nodes = nodes;
        }
    }

    /** Connects as these settings say, with {@code options} (the timeout from here when set). */
    public RedisAtomic connect(Options options) {
        Options o = timeout == null ? options : options.withTimeout(timeout);
        if (!cluster.getNodes().isEmpty()) {
            return RedisAtomic.connectCluster(cluster.getNodes().stream().map(this::nodeUrl).toList(), o);
        }
        return RedisAtomic.connect(url(), o);
    }

    /** The URL these settings name (standalone or Sentinel). */
    public String url() {
        if (sentinel.getMaster() != null && !sentinel.getNodes().isEmpty()) {
            return (ssl.isEnabled() ? "rediss" : "redis") + "+sentinel://" + credentials()
                    + String.join(",", sentinel.getNodes()) + "/" + sentinel.getMaster() + "/" + database;
        }
        if (url != null && !url.isEmpty()) {
            return url;
        }
        return nodeUrl(host + ":" + port) + "/" + database;
    }

    private String nodeUrl(String hostPort) {
        return (ssl.isEnabled() ? "rediss" : "redis") + "://" + credentials() + hostPort;
    }

    private String credentials() {
        if (password == null || password.isEmpty()) {
            return "";
        }
        String user = username == null ? "" : enc(username);
        return user + ":" + enc(password) + "@";
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    public String getUrl() {
        return url;
    }

    public void setUrl(String url) {
        this.url = url;
    }

    public String getHost() {
        return host;
    }

    public void setHost(String host) {
        this.host = host;
    }

    public int getPort() {
        return port;
    }

    public void setPort(int port) {
        this.port = port;
    }

    public String getUsername() {
        return username;
    }

    public void setUsername(String username) {
        this.username = username;
    }

    public String getPassword() {
        return password;
    }

    public void setPassword(String password) {
        this.password = password;
    }

    public int getDatabase() {
        return database;
    }

    public void setDatabase(int database) {
        this.database = database;
    }

    public Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    public Ssl getSsl() {
        return ssl;
    }

    public Sentinel getSentinel() {
        return sentinel;
    }

    public Cluster getCluster() {
        return cluster;
    }
}
