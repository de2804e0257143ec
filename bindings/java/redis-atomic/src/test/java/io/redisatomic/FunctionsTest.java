package io.redisatomic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.redisatomic.junit.EmbeddedRedis;
import io.redisatomic.junit.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Delivery on a real server, counted in INFO commandstats: EVALSHA until the Function library is
 * deployed (by the CLI), FCALL / FCALL_RO once it is, EVALSHA again for a call whose function went
 * missing (nothing ran, so it is sent the other way in the same attempt, once).
 */
@RedisServer
class FunctionsTest {
    private final EmbeddedRedis server;

    FunctionsTest(EmbeddedRedis server) {
        this.server = server;
    }

    @Test
    void fcallOnceTheLibraryIsDeployedAndEvalshaOtherwise() throws Exception {
        try (ServerStats s = new ServerStats(server.url())) {
            try (RedisAtomic before = RedisAtomic.connect(server.url())) {
                assertEquals(Delivery.EVAL, before.delivery());
                ((Lock) before.locks("fn").acquire("warm", Duration.ofSeconds(5))).release(); // the scripts are loaded now
                s.resetStats();
                ((Lock) before.locks("fn").acquire("a", Duration.ofSeconds(5))).release();
                assertEquals(0, s.calls("fcall"));
                assertEquals(2, s.calls("evalsha"), "acquire and release by EVALSHA");
            }
            Cli.run("functions", "deploy", "--url", server.url());
            try (RedisAtomic ra = RedisAtomic.connect(server.url())) {
                assertEquals(Delivery.FUNCTIONS, ra.delivery());
                s.resetStats();
                Locks locks = ra.locks("fn");
                ((Lock) locks.acquire("a", Duration.ofSeconds(5))).release();
                assertInstanceOf(LockState.Free.class, locks.inspect("a"));
                assertEquals(2, s.calls("fcall"));
                assertEquals(1, s.calls("fcall_ro"), "a no-writes script by FCALL_RO");
                assertEquals(0, s.calls("evalsha") + s.calls("evalsha_ro"));

                s.redis().dispatch(io.lettuce.core.protocol.CommandType.FUNCTION, new io.lettuce.core.output.StatusOutput<>(io.lettuce.core.codec.StringCodec.UTF8),
                        new io.lettuce.core.protocol.CommandArgs<>(io.lettuce.core.codec.StringCodec.UTF8).add("DELETE").add(io.redisatomic.scripts.LockAcquire.DEF.library()));
                s.resetStats();
                assertInstanceOf(Lock.class, locks.acquire("b", Duration.ofSeconds(5)));
                assertEquals(1, s.calls("evalsha"), "the missing function's call ran once, by EVALSHA");
                assertEquals(Delivery.EVAL, ra.delivery());
                assertInstanceOf(LockState.Locked.class, locks.inspect("b"));
            }
            Cli.run("functions", "deploy", "--url", server.url());
            try (RedisAtomic eval = RedisAtomic.connect(server.url(), Options.defaults().withDelivery(Delivery.EVAL))) {
                s.resetStats();
                eval.locks("fn").inspect("b");
                assertEquals(0, s.calls("fcall_ro"));
                assertEquals(1, s.calls("evalsha_ro"), "EVAL asked: EVALSHA whatever is deployed");
            }
        }
        assertEquals(Delivery.EVAL, Delivery.parse("evalsha"));
    }
}
