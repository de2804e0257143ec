package peers.driver;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.redisson.client.RedisException;

/**
 * The thread of one lock holder. Redisson's locks belong to a thread (its client's id and the
 * thread's id), and are reentrant: two acquisitions from one thread are one holder. The harness's
 * holders are distinct (each acquisition has a token of its own), so each acquisition runs on a
 * thread of its own, kept for its release — as distinct users of the lock would be.
 */
final class Holder implements AutoCloseable {
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "holder");
        t.setDaemon(true);
        return t;
    });

    /** Runs {@code call} on this holder's thread, as {@link RedissonPeer#call} maps its errors. */
    <T> T run(RedissonPeer.Call<T> call) throws Failed {
        try {
            return thread.submit(call::run).get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RedisException r) {
                throw Failed.unknown(r);
            }
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
