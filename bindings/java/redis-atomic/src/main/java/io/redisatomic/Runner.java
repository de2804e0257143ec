package io.redisatomic;

import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.redisatomic.scripts.ScriptDef;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Runs a script as the Rust library does: {@code EVALSHA} ({@code EVALSHA_RO} for a read-only
 * script), and on {@code NOSCRIPT} (nothing ran) one {@code SCRIPT LOAD} and one resend. Each
 * call retries under the client's {@link RetryPolicy}: a transient refusal always, an unknown
 * outcome only when the call is retry-safe (the script header's retry class, or the caller's
 * verdict for the call). A call that may have run is never resent otherwise, and the link is
 * at-most-once, so nothing else resends it either.
 */
final class Runner {
    private final Link link;
    private final RetryPolicy policy;

    Runner(Link link, RetryPolicy policy) {
        this.link = link;
        this.policy = policy;
    }

    /** One call's state across its attempts. */
    private static final class Call {
        final ScriptDef def;
        final byte[][] keys;
        final byte[][] args;
        final boolean retrySafe;
        final long deadline;
        OutcomeUnknownException unknown;
        boolean timedOut;

        Call(ScriptDef def, byte[][] keys, byte[][] args, boolean retrySafe, long deadline) {
            this.def = def;
            this.keys = keys;
            this.args = args;
            this.retrySafe = retrySafe;
            this.deadline = deadline;
        }
    }

    CompletableFuture<Object> run(ScriptDef def, List<String> keys, List<?> args, boolean retrySafe) {
        CompletableFuture<Object> out = new CompletableFuture<>();
        try {
            Keyspace.requireSameSlot(keys);
            Call c = new Call(def, encode(keys), encode(args), retrySafe,
                    System.nanoTime() + policy.deadline().toNanos());
            attempt(c, 1, out);
        } catch (RuntimeException e) {
            out.completeExceptionally(Classify.failure(e));
        }
        return out;
    }

    private void attempt(Call c, int n, CompletableFuture<Object> out) {
        once(c).whenComplete((v, t) -> {
            if (t == null) {
                out.complete(v);
                return;
            }
            RedisAtomicException e = Classify.failure(t);
            if (e instanceof OutcomeUnknownException u) {
                c.unknown = u;
                c.timedOut |= u.timedOut();
            }
            boolean retry = e.isTransient() || (e instanceof OutcomeUnknownException && c.retrySafe);
            long wait = policy.backoffNanos(n);
            if (!retry || n >= policy.maxAttempts() || System.nanoTime() + wait > c.deadline) {
                out.completeExceptionally(finalError(c, e, n));
                return;
            }
            CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS).execute(() -> attempt(c, n + 1, out));
        });
    }

    /** The call's error: an unknown outcome if any attempt may have run (every attempt counted), else the last. */
    private static RedisAtomicException finalError(Call c, RedisAtomicException last, int attempts) {
        if (c.unknown == null) {
            return last;
        }
        String reason = String.valueOf(c.unknown.getCause() == null ? c.unknown.getMessage() : c.unknown.getCause().getMessage());
        return new OutcomeUnknownException(reason, attempts, c.timedOut, c.retrySafe, c.unknown.getCause());
    }

    /** One attempt: EVALSHA, and after NOSCRIPT (nothing ran) SCRIPT LOAD and one resend. */
    private CompletionStage<Object> once(Call c) {
        return evalsha(c).exceptionallyCompose(t -> {
            RedisAtomicException e = Classify.failure(t);
            if (e instanceof RejectedException r && r.serverCode().equals("NOSCRIPT")) {
                return send(() -> link.scripting().scriptLoad(c.def.body().getBytes(StandardCharsets.UTF_8)))
                        .thenCompose(sha -> evalsha(c));
            }
            return CompletableFuture.failedFuture(e);
        });
    }

    private CompletionStage<Object> evalsha(Call c) {
        return send(() -> {
            RedisScriptingAsyncCommands<byte[], byte[]> s = link.scripting();
            return c.def.readOnly()
                    ? s.<Object>evalshaReadOnly(c.def.sha1(), ScriptOutputType.OBJECT, c.keys, c.args)
                    : s.<Object>evalsha(c.def.sha1(), ScriptOutputType.OBJECT, c.keys, c.args);
        });
    }

    /** Sends by {@code request}; a refusal thrown before the write fails the stage like any other. */
    private static <T> CompletionStage<T> send(java.util.function.Supplier<CompletionStage<T>> request) {
        try {
            return request.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(Classify.failure(e));
        }
    }

    private static byte[][] encode(List<?> values) {
        byte[][] out = new byte[values.size()][];
        for (int i = 0; i < out.length; i++) {
            out[i] = bytes(values.get(i));
        }
        return out;
    }

    /** An argument as the bytes the server gets: strings in UTF-8, numbers in decimal, bytes as they are. */
    static byte[] bytes(Object v) {
        if (v instanceof byte[] b) {
            return b;
        }
        if (v instanceof String || v instanceof Long || v instanceof Integer) {
            return v.toString().getBytes(StandardCharsets.UTF_8);
        }
        throw new BadArgumentException("an argument must be a String, byte[], Long or Integer, got "
                + (v == null ? "null" : v.getClass().getSimpleName()));
    }
}
