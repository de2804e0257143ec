package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Idempotency keys on a real server: one execution under concurrent duplicates, replay, mismatch, failures. */
@RedisServer
class IdempotencyTest {
    private static final Fingerprint FP = Fingerprint.ofStrings("POST", "/charges", "{\"amount\":5}");
    private final Idempotency idem;

    IdempotencyTest(EmbeddedRedis server) {
        this.idem = Clients.shared(server).idempotency("idt");
    }

    @AfterAll
    static void closeClient() {
        Clients.closeAll();
    }

    private static byte[] key(String k) {
        return k.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void concurrentDuplicatesExecuteOnceAndAllGetTheResult() throws Exception {
        int duplicates = 32;
        AtomicInteger executions = new AtomicInteger();
        CountDownLatch othersRefused = new CountDownLatch(duplicates - 1);
        ExecutorService pool = Executors.newFixedThreadPool(duplicates);
        List<Future<Response>> answers = new ArrayList<>();
        try {
            for (int i = 0; i < duplicates; i++) {
                answers.add(pool.submit(() -> {
                    Begin b = idem.begin("charges", key("dup-1"), FP);
                    if (b instanceof Claim c) {
                        executions.incrementAndGet();
                        // Every duplicate found it in progress first (bounded: a second claim would never count down).
                        assertTrue(othersRefused.await(60, TimeUnit.SECONDS), "a duplicate did not find the claim in progress");
                        Response r = Response.of(201, key("charged once")).withHeader("content-type", "text/plain");
                        assertEquals(new End.Stored(), c.complete(r));
                        return r;
                    }
                    assertInstanceOf(Begin.InProgress.class, b);
                    othersRefused.countDown();
                    return null;
                }));
            }
            List<Response> results = new ArrayList<>();
            for (Future<Response> f : answers) {
                results.add(f.get());
            }
            assertEquals(1, executions.get());
            Response stored = results.stream().filter(r -> r != null).findFirst().orElseThrow();
            Begin.Replay replay = (Begin.Replay) idem.begin("charges", key("dup-1"), FP);
            assertEquals(new Begin.Stored.Completed(stored), replay.stored());
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void anotherFingerprintIsAMismatch() {
        try (Claim c = (Claim) idem.begin("charges", key("mm"), FP)) {
            c.complete(Response.of(200, new byte[0]));
        }
        assertEquals(new Begin.Mismatch(), idem.begin("charges", key("mm"), Fingerprint.ofStrings("other")));
    }

    @Test
    void aRetryableFailureFreesTheKeyAndAFinalOneIsReplayed() {
        Claim first = (Claim) idem.begin("charges", key("fail"), FP);
        assertEquals(new End.Stored(), first.fail(new Failure.Retryable()));
        Claim second = (Claim) idem.begin("charges", key("fail"), FP);
        assertTrue(second.fence() > first.fence());
        Response refusal = Response.of(402, key("card declined"));
        second.fail(new Failure.Final(refusal));
        assertEquals(new Begin.Replay(new Begin.Stored.Failed(refusal)), idem.begin("charges", key("fail"), FP));
        assertThrows(HandleEndedException.class, () -> second.complete(refusal));
    }

    @Test
    void closingAnUnfinishedClaimLetsTheNextDuplicateExecute() {
        long fence;
        try (Claim c = (Claim) idem.begin("charges", key("closed"), FP)) {
            fence = c.fence();
        }
        Claim again = (Claim) idem.begin("charges", key("closed"), FP);
        assertTrue(again.fence() > fence);
        assertEquals(new Lost(), idem.complete("charges", key("closed"), again.token(), fence, Response.of(200, new byte[0])),
                "a superseded claim cannot store a result");
    }

    @Test
    void responsesRoundTripTheRustEncoding() {
        Response r = new Response(299, List.of(new Response.Header("x-a", new byte[] {0, (byte) 0xff})),
                new Response.Body.Reference("s3://bucket/obj"));
        assertEquals(r, Response.decode(r.encode()));
        byte[] enc = Response.of(200, key("ok")).encode();
        assertArrayEquals(new byte[] {'R', '1', 0, (byte) 200, 0, 0, 0, 'o', 'k'}, enc);
        assertThrows(BadReplyException.class, () -> Response.decode(new byte[] {'R', '1', 0}));
    }
}
