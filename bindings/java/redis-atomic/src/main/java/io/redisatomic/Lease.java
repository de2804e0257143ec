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
 * of the handle, and the watchdog. The watchdog extends the lease every {@code renewFraction} of
 * its TTL on one shared daemon scheduler (the extend itself is asynchronous, so the scheduler never
 * waits on the network) and fails the watch future with {@link LeaseLostException}: reason
 * {@code NOT_HELD} when an extend finds the lease lost, {@code UNCONFIRMED} when no extend was
 * confirmed before the proven lease (from the send of the last confirmed call) ends, less the
 * margin. A deadline task per confirmation fires that second case on time.
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
    private final AtomicReference<ScheduledFuture<?>> deadline = new AtomicReference<>();
    private final java.util.concurrent.atomic.AtomicInteger failedRenewals = new java.util.concurrent.atomic.AtomicInteger();
    private volatile long lastRenewedNanos;
    private volatile WatchConfig config = WatchConfig.defaults();

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

    CompletableFuture<Void> watch(WatchConfig c) {
        if (ended.get()) {
            return CompletableFuture.failedFuture(endedError());
        }
        long period = Math.max(1, (long) (ttl.toMillis() * c.renewFraction()));
        if (renewal.get() == null) {
            ScheduledFuture<?> mine = WATCHDOG.scheduleAtFixedRate(this::renew, period, period, TimeUnit.MILLISECONDS);
            if (!renewal.compareAndSet(null, mine)) {
                mine.cancel(false); // another watch() won: one renewal per lease
            } else {
                config = c;
                armDeadline();
            }
        }
        return watched;
    }

    /** Whether the lease is still provably held: not ended, not lost, and its proven end (less the margin) not passed. */
    boolean isHeld() {
        return !ended.get() && !watched.isCompletedExceptionally() && System.nanoTime() < provenEndNanos();
    }

    int failedRenewals() {
        return failedRenewals.get();
    }

    private long provenEndNanos() {
        return lastRenewedNanos + (long) (ttl.toNanos() * (1 - config.marginFraction()));
    }

    /** (Re)schedules the UNCONFIRMED check at the proven end of the last confirmed lease. */
    private void armDeadline() {
        long confirmed = lastRenewedNanos;
        ScheduledFuture<?> next = WATCHDOG.schedule(() -> {
            if (lastRenewedNanos == confirmed) {
                lose(LeaseLostException.Reason.UNCONFIRMED, "no renewal was confirmed within the lease ("
                        + failedRenewals.get() + " failed)", null);
            }
        }, Math.max(0, provenEndNanos() - System.nanoTime()), TimeUnit.NANOSECONDS);
        ScheduledFuture<?> old = deadline.getAndSet(next);
        if (old != null) {
            old.cancel(false);
        }
    }

    void unwatch() {
        stop();
        watched.complete(null);
    }

    private void stop() {
        for (ScheduledFuture<?> r : java.util.List.of(renewal, deadline).stream().map(AtomicReference::get).toList()) {
            if (r != null) {
                r.cancel(false);
            }
        }
    }

    private void renew() {
        if (watched.isDone()) {
            return;
        }
        long sent = System.nanoTime();
        extender.apply(ttl).whenComplete((r, t) -> {
            if (r instanceof Extend.Extended) {
                lastRenewedNanos = sent; // proven from when the extend was sent
                failedRenewals.set(0);
                armDeadline();
            } else if (r instanceof Lost) {
                lose(LeaseLostException.Reason.NOT_HELD, "an extend found the lease lost", null);
            } else {
                failedRenewals.incrementAndGet();
            }
        });
    }

    private void lose(LeaseLostException.Reason reason, String why, Throwable cause) {
        stop();
        watched.completeExceptionally(new LeaseLostException(reason, what + " (fence " + fence + ") was lost: " + why, cause));
    }
}
