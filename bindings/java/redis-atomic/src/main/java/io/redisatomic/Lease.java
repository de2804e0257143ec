package io.redisatomic;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * The lease every handle shares (a lock, an idempotency claim): owner token, fence, TTL, the end
 * of the handle, and the watchdog. The watchdog extends the lease every third of its TTL on one
 * shared daemon scheduler (the extend itself is asynchronous, so the scheduler never waits on the
 * network) and fails the watch future with {@link LeaseLostException} when an extend finds the
 * lease lost, or when none succeeded for a whole TTL.
 */
final class Lease {
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "redis-atomic-watchdog");
        t.setDaemon(true);
        return t;
    });
    final String what;
    final String token;
    final long fence;
    final Duration ttl;
    private final Instant sentAt;
    private final Function<Duration, CompletableFuture<Extend>> extender;
    private final AtomicBoolean ended = new AtomicBoolean();
    private final CompletableFuture<Void> watched = new CompletableFuture<>();
    private final AtomicReference<ScheduledFuture<?>> renewal = new AtomicReference<>();
    private volatile long lastRenewedNanos;

    /** {@code sentNanos}: when the call that took the lease was sent (System.nanoTime). */
    Lease(String what, String token, long fence, Duration ttl, long sentNanos,
            Function<Duration, CompletableFuture<Extend>> extender) {
        this.what = what;
        this.token = token;
        this.fence = fence;
        this.ttl = ttl;
        this.extender = extender;
        this.lastRenewedNanos = sentNanos;
        this.sentAt = Instant.now().minusNanos(System.nanoTime() - sentNanos);
    }

    Instant expiresBy() {
        return sentAt.plus(ttl);
    }

    boolean ended() {
        return ended.get();
    }

    /** Ends the handle: true the first time, false when it had already ended. */
    boolean end() {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        unwatch();
        return true;
    }

    HandleEndedException endedError() {
        return new HandleEndedException(what + " has already ended");
    }

    CompletableFuture<Void> watch() {
        if (ended.get()) {
            return CompletableFuture.failedFuture(endedError());
        }
        long period = Math.max(1, ttl.toMillis() / 3);
        if (renewal.get() == null) {
            ScheduledFuture<?> mine = WATCHDOG.scheduleAtFixedRate(this::renew, period, period, TimeUnit.MILLISECONDS);
            if (!renewal.compareAndSet(null, mine)) {
                mine.cancel(false); // another watch() won: one renewal per lease
            }
        }
        return watched;
    }

    void unwatch() {
        stop();
        watched.complete(null);
    }

    private void stop() {
        ScheduledFuture<?> r = renewal.get();
        if (r != null) {
            r.cancel(false);
        }
    }

    private void renew() {
        if (watched.isDone()) {
            return;
        }
        extender.apply(ttl).whenComplete((r, t) -> {
            if (r instanceof Extend.Extended) {
                lastRenewedNanos = System.nanoTime();
            } else if (r instanceof Lost) {
                lose("an extend found the lease lost");
            } else if (System.nanoTime() - lastRenewedNanos >= ttl.toNanos()) {
                lose("no extend succeeded within the lease: " + (t == null ? "" : Classify.failure(t).getMessage()));
            }
        });
    }

    private void lose(String why) {
        stop();
        watched.completeExceptionally(new LeaseLostException(what + " (fence " + fence + ") was lost: " + why));
    }
}
