package io.redisatomic;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Sorts what Lettuce reports for a request into the library's errors, as the Rust library's
 * {@code Error::from_redis}: a server's error reply by its code; a request Lettuce refused to write
 * (no connection) sent nothing; anything else after the write (a timeout, a connection lost with
 * the request in flight) may have run.
 */
final class Classify {
    private Classify() {
    }

    /**
     * A server's error reply ("CODE message") by its code, as {@code Error::from_server_error}: the
     * message is read only for {@code ERR redis-atomic: ...}, the scripts' own refusal of an
     * argument.
     */
    static RedisAtomicException serverError(String reply) {
        int sp = reply.indexOf(' ');
        String code = sp < 0 ? reply : reply.substring(0, sp);
        String message = sp < 0 ? "" : reply.substring(sp + 1);
        if (RejectedException.TRANSIENT.contains(code) || RejectedException.LASTING.contains(code)) {
            return new RejectedException(code, message);
        }
        if (code.equals("WRONGTYPE")) {
            return new WrongTypeException(message);
        }
        if (code.equals("CROSSSLOT")) {
            return new CrossSlotException("refused by the server: " + message);
        }
        if (code.equals("ERR") && message.startsWith("redis-atomic:")) {
            return new BadArgumentException(message.substring("redis-atomic:".length()).strip());
        }
        return new ServerErrorException(code, message);
    }

    /** Lettuce's failure of a request that was handed to it. */
    static RedisAtomicException failure(Throwable t) {
        Throwable e = unwrap(t);
        if (e instanceof RedisAtomicException ra) {
            return ra;
        }
        if (e instanceof io.redisatomic.scripts.BadReplyException bad) {
            return new BadReplyException(bad.getMessage(), bad);
        }
        if (e instanceof RedisCommandExecutionException server) {
            return serverError(String.valueOf(server.getMessage()));
        }
        if (e instanceof RedisConnectionException || notWritten(e)) {
            return new NotSentException(String.valueOf(e.getMessage()), e);
        }
        boolean timedOut = e instanceof RedisCommandTimeoutException;
        return new OutcomeUnknownException(String.valueOf(e.getMessage()), 1, timedOut, false, e);
    }

    /**
     * Lettuce's refusals to write a command (the connection is closed or not connected: with
     * {@link AtMostOnce}'s REJECT_COMMANDS it rejects rather than buffers), so the command never left the
     * client. A command in flight when its connection dropped ("Connection disconnected") may have run.
     */
    private static boolean notWritten(Throwable e) {
        String m = String.valueOf(e.getMessage());
        return m.startsWith("Currently not connected") || m.startsWith("Connection is closed")
                || m.startsWith("Request queue size exceeded") || m.startsWith("Command buffer size exceeded");
    }

    static Throwable unwrap(Throwable t) {
        Throwable e = t;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e instanceof CancellationException ? new RedisCommandTimeoutException("cancelled") : e;
    }
}
