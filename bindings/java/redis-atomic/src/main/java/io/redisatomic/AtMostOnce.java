package io.redisatomic;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.protocol.ProtocolVersion;
import java.time.Duration;

/**
 * The Lettuce options that make the library's connections at-most-once yet self-healing, one
 * place for standalone, Sentinel and Cluster clients.
 *
 * <p>Lettuce's default is at-least-once: with auto-reconnect on and commands accepted while
 * disconnected, a command written but unanswered when its connection drops is queued again and
 * replayed on the new connection, so a script that is not retry-safe could run twice without the
 * caller knowing. What stops that (Lettuce 7.7's {@code DefaultEndpoint}, read, not assumed):
 * <ul>
 * <li>{@code disconnectedBehavior(REJECT_COMMANDS)}: when a connection drops, every command in
 * flight is completed at once with {@code RedisException("Connection disconnected")} instead of
 * being queued for the reconnect ({@code notifyDrainQueuedCommands}); the library reads that as
 * an unknown outcome. A command handed over while disconnected is refused ("Currently not
 * connected"): never written, so not sent, and the retry policy may send it again.</li>
 * <li>{@code replayFilter(c -> true)}: a second guard. In 7.7 the filter is read only where a
 * command would be queued while disconnected (with REJECT_COMMANDS only in a race with a dropping
 * connection: the filtered command then ends by its timeout, an unknown outcome) or re-queued
 * after a failed write (never with REJECT_COMMANDS). It does not cover commands in flight: with
 * ACCEPT_COMMANDS, AtMostOnceTest's lost replies are replayed whatever the filter says.</li>
 * <li>{@code autoReconnect(true)}: a dropped connection comes back by itself. On a Cluster that is
 * what keeps a node's slots reachable: the cluster connection stays open while one node
 * connection in it is down, so nothing else would ever reopen that node connection.</li>
 * </ul>
 * A Cluster also refreshes its slot map on every adaptive trigger (MOVED, ASK, persistent
 * reconnects to a node, an uncovered slot, an unknown node) and periodically, so a failed-over
 * primary's slots are found on its promoted replica.
 *
 * <p>Connections that carry state across commands (CAS's WATCH, MULTI) must not come back by
 * themselves: a reconnected connection has lost that state. {@link Link#dedicated} builds them
 * with auto-reconnect off; a dropped one stays closed.
 */
final class AtMostOnce {
    /** The least time between two slot-map refreshes on adaptive triggers. */
    static final Duration ADAPTIVE_REFRESH_GAP = Duration.ofSeconds(1);
    /** The periodic slot-map refresh, for a change no trigger reports. */
    static final Duration PERIODIC_REFRESH = Duration.ofSeconds(10);

    private AtMostOnce() {
    }

    /**
     * {@code b} with the at-most-once options, a per-command timeout and a connect timeout of
     * {@code timeout}; {@code reconnect} false for connections that carry state (WATCH, MULTI).
     */
    static <B extends ClientOptions.Builder> B options(B b, Duration timeout, SslOptions ssl, boolean reconnect) {
        b.autoReconnect(reconnect)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .replayFilter(command -> true)
                .protocolVersion(ProtocolVersion.RESP2)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
                .sslOptions(ssl);
        return b;
    }

    /**
     * Every adaptive trigger (Lettuce 7's builder enables them all), a refresh after two failed
     * reconnects to a node, and a periodic refresh. Following MOVED and ASK (Lettuce's default) is
     * safe: the command did not run.
     */
    static ClusterTopologyRefreshOptions topologyRefresh() {
        return ClusterTopologyRefreshOptions.builder()
                .adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_GAP)
                .refreshTriggersReconnectAttempts(2)
                .enablePeriodicRefresh(PERIODIC_REFRESH)
                .build();
    }
}
