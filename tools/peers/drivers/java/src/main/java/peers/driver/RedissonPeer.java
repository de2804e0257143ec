package peers.driver;

import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.config.Config;

/**
 * A Redisson peer's client, with Redisson's defaults as its users get them: it resends a command
 * on its own after a timeout or a lost connection (its {@code retryAttempts}), so what the rows
 * judge includes those resends. Under a fault the command timeout is 200 ms (the protocol's short
 * timeout; Redisson's default is 3 s), nothing else changes.
 *
 * <p>Errors: after Redisson's own retries an exception does not say whether an earlier attempt
 * ran, so every {@link RedisException} of a call is {@code outcome_unknown}. A client that could
 * not be created (the hello's connect refused while the row's fault was under way) is created
 * again by the next request; while that fails, the request is {@code connection}: nothing was
 * sent.
 */
abstract class RedissonPeer implements Peer {
    /** A Redisson call, run on the calling thread. */
    interface Call<T> {
        T run() throws InterruptedException;
    }

    protected final Driver.Hello hello;
    private RedissonClient client;

    RedissonPeer(Driver.Hello hello) {
        this.hello = hello;
        try {
            client = connect();
        } catch (RedisException e) {
            client = null;
        }
    }

    private RedissonClient connect() {
        Config cfg = new Config();
        var server = cfg.useSingleServer().setAddress(hello.url());
        if (hello.faulty()) {
            server.setTimeout(200);
        }
        return Redisson.create(cfg);
    }

    /** The client; created now if the hello could not. */
    protected final RedissonClient client() throws Failed {
        if (client == null) {
            try {
                client = connect();
            } catch (RedisException e) {
                throw Failed.notConnected(e);
            }
        }
        return client;
    }

    /** Runs {@code call}: a Redisson error is an unknown outcome. */
    protected static <T> T call(Call<T> call) throws Failed {
        try {
            return call.run();
        } catch (RedisException e) {
            throw Failed.unknown(e);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        if (client != null) {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
