package io.redisatomic;

import io.lettuce.core.ScriptOutputType;
import io.redisatomic.scripts.ScriptDef;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Runs a script as the Rust library does: {@code EVALSHA} ({@code EVALSHA_RO} for a read-only
 * script), and on {@code NOSCRIPT} (nothing ran) one {@code SCRIPT LOAD} and one resend; or
 * {@code FCALL} ({@code FCALL_RO}) of the script's function when its Function library is deployed
 * (found at connect, or {@link Delivery#FUNCTIONS} asked), and on {@code Function not found}
 * (nothing ran) {@code EVALSHA} in the same attempt, with that library no longer called. Each
 * call retries under the client's {@link RetryPolicy}: a transient refusal always, an unknown
 * outcome only when the call is retry-safe (the script header's retry class, or the caller's
 * verdict for the call). A call that may have run is never resent otherwise, and the link is
 * at-most-once, so nothing else resends it either.
 */
final class Runner {
    private final Link link;
    private final RetryPolicy policy;
    private final boolean allFunctions;
    private final java.util.Set<String> deployed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.Set<String> missing = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** {@code delivery} null: FCALL for {@code library} if it is deployed now (one FUNCTION LIST), else EVALSHA. */
    Runner(Link link, RetryPolicy policy, Delivery delivery, String library) {
        this.link = link;
        this.policy = policy;
        this.allFunctions = delivery == Delivery.FUNCTIONS;
        if (delivery == null && deployedNow(library)) {
            deployed.add(library);
        }
    }

    /** Whether the server holds the Function library named {@code library}; a refused or failed question says no. */
    private boolean deployedNow(String library) {
        try {
            Object listed = link.async().functionList(library).get(10, TimeUnit.SECONDS);
            return leaves(listed).anyMatch(library::equals);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return false;
        }
    }

    /** Every text in a reply, however Lettuce shaped it (lists, maps, byte[] or String leaves). */
    private static java.util.stream.Stream<String> leaves(Object o) {
        if (o instanceof java.util.Collection<?> c) {
            return c.stream().flatMap(Runner::leaves);
        }
        if (o instanceof java.util.Map<?, ?> m) {
            return java.util.stream.Stream.concat(leaves(m.keySet()), leaves(m.values()));
        }
        return java.util.stream.Stream.of(o instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : String.valueOf(o));
    }

    /** How calls of {@code def} are delivered now. */
    Delivery delivery(ScriptDef def) {
        boolean functions = !missing.contains(def.library()) && (allFunctions || deployed.contains(def.library()));
        return functions ? Delivery.FUNCTIONS : Delivery.EVAL;
    }

    /** One call's state across its attempts: what one attempt sends, and what the attempts found. */
    private static final class Call<T> {
        final Supplier<CompletionStage<T>> once;
        final boolean retrySafe;
        final long deadline;
        OutcomeUnknownException unknown;
        boolean timedOut;

        Call(Supplier<CompletionStage<T>> once, boolean retrySafe, long deadline) {
            this.once = once;
            this.retrySafe = retrySafe;
            this.deadline = deadline;
        }
    }

    CompletableFuture<Object> run(ScriptDef def, List<String> keys, List<?> args, boolean retrySafe) {
        try {
            Keyspace.requireSameSlot(keys);
            byte[][] k = encode(keys);
            byte[][] a = encode(args);
            return command(() -> once(def, k, a), retrySafe);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(Classify.failure(e));
        }
    }

    /** Runs {@code once} under the retry policy: every attempt sends it again. */
    <T> CompletableFuture<T> command(Supplier<CompletionStage<T>> once, boolean retrySafe) {
        CompletableFuture<T> out = new CompletableFuture<>();
        attempt(new Call<>(once, retrySafe, System.nanoTime() + policy.deadline().toNanos()), 1, out);
        return out;
    }

    private <T> void attempt(Call<T> c, int n, CompletableFuture<T> out) {
        send(c.once).whenComplete((v, t) -> {
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
    private static RedisAtomicException finalError(Call<?> c, RedisAtomicException last, int attempts) {
        if (c.unknown == null) {
            return last;
        }
        String reason = String.valueOf(c.unknown.getCause() == null ? c.unknown.getMessage() : c.unknown.getCause().getMessage());
        return new OutcomeUnknownException(reason, attempts, c.timedOut, c.retrySafe, c.unknown.getCause());
    }

    /** One attempt: FCALL when its library is deployed, else (or when its function is missing: nothing ran) EVALSHA. */
    private CompletionStage<Object> once(ScriptDef def, byte[][] keys, byte[][] args) {
        if (delivery(def) == Delivery.EVAL) {
            return viaEval(def, keys, args);
        }
        return send(() -> def.readOnly()
                ? link.async().<Object>fcallReadOnly(def.functionName(), ScriptOutputType.OBJECT, keys, args)
                : link.async().<Object>fcall(def.functionName(), ScriptOutputType.OBJECT, keys, args)).exceptionallyCompose(t -> {
                    RedisAtomicException e = Classify.failure(t);
                    if (e instanceof ServerErrorException s && s.getMessage().contains("Function not found")) {
                        missing.add(def.library());
                        return viaEval(def, keys, args);
                    }
                    return CompletableFuture.failedFuture(e);
                });
    }

    /** EVALSHA, and after NOSCRIPT (nothing ran) SCRIPT LOAD and one resend. */
    private CompletionStage<Object> viaEval(ScriptDef def, byte[][] keys, byte[][] args) {
        return evalsha(def, keys, args).exceptionallyCompose(t -> {
            RedisAtomicException e = Classify.failure(t);
            if (e instanceof RejectedException r && r.serverCode().equals("NOSCRIPT")) {
                return send(() -> link.async().scriptLoad(def.body().getBytes(StandardCharsets.UTF_8)))
                        .thenCompose(sha -> evalsha(def, keys, args));
            }
            return CompletableFuture.failedFuture(e);
        });
    }

    private CompletionStage<Object> evalsha(ScriptDef def, byte[][] keys, byte[][] args) {
        return send(() -> def.readOnly()
                ? link.async().<Object>evalshaReadOnly(def.sha1(), ScriptOutputType.OBJECT, keys, args)
                : link.async().<Object>evalsha(def.sha1(), ScriptOutputType.OBJECT, keys, args));
    }

    /** Sends by {@code request}; a refusal thrown before the write fails the stage like any other. */
    private static <T> CompletionStage<T> send(Supplier<CompletionStage<T>> request) {
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
