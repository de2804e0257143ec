package io.redisatomic;

/**
 * How an execution failed: {@link Retryable} (the key is freed: the next duplicate executes) or
 * {@link Final} (this response is stored and replayed to every duplicate).
 */
public sealed interface Failure permits Failure.Retryable, Failure.Final {
    record Retryable() implements Failure {
    }

    record Final(Response response) implements Failure {
    }
}
