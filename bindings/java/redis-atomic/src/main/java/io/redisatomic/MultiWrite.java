package io.redisatomic;

import java.util.List;

/**
 * A batch of typed writes ({@link Write}) applied atomically: MULTI, the writes, EXEC, on a
 * connection of its own. Invariant: no other client sees some of the writes without the rest.
 * Keys: the caller's, all in one hash slot (checked before sending). Retries: every write is
 * idempotent, so the batch is sent again after a transient refusal or an unknown outcome (within
 * the client's retry policy) and its {@link OutcomeUnknownException} says {@code retrySafe()}.
 * Not guaranteed: a write failing inside EXEC (a wrong type) does not undo the ones before it (the
 * error names it); durability is the server's.
 */
public record MultiWrite(List<Write> writes) {
    public MultiWrite {
        writes = List.copyOf(writes);
        Write.checkBatch(writes);
    }

    public static MultiWrite of(Write... writes) {
        return new MultiWrite(List.of(writes));
    }

    /** Applies every write at once through {@code client}. */
    public void execute(RedisAtomic client) {
        client.cas().multi(writes, client.options().retry());
    }
}
