"""Errors as typed exceptions: bad inputs never reach the server nor crash the interpreter, a
stalled server is an unknown outcome within the timeout, and each class keeps what a retry
would do."""

from __future__ import annotations

import asyncio
import math
import time
from datetime import timedelta
from typing import Any, Callable

import pytest

import redis_atomic as ra
from redis_atomic.testing import RedisServer

DAY = 86_400


def bad_calls(client: ra.Client) -> list[tuple[str, Callable[[], Any], type[BaseException]]]:
    limiter = ra.RateLimiter(client, "t", ra.Limit.gcra(5, 1))
    quotas = ra.Quotas(client, "t")
    dedup = ra.Dedup(client, "t")
    fenced = ra.FencedWrites(client, "t")
    return [
        ("cost 0", lambda: limiter.consume("k", 0), ra.BadArgument),
        ("cost -1", lambda: limiter.consume("k", -1), ra.BadArgument),
        ("cost 2^70", lambda: limiter.consume("k", 2**70), ra.BadArgument),
        ("cost over burst", lambda: limiter.consume("k", 6), ra.CostExceedsBurst),
        ("cost a str", lambda: limiter.consume("k", "1"), TypeError),  # type: ignore[arg-type]
        ("cost a bool", lambda: limiter.consume("k", True), TypeError),
        ("empty request id", lambda: limiter.consume("k", request_id=""), ra.BadArgument),
        ("huge identity", lambda: limiter.consume("k" * 5000), ra.BadArgument),
        ("limit 0", lambda: ra.Limit.gcra(0, 1), ra.BadArgument),
        ("period NaN", lambda: ra.Limit.gcra(1, math.nan), ra.BadArgument),
        ("period inf", lambda: ra.Limit.gcra(1, math.inf), ra.BadArgument),
        ("period negative", lambda: ra.Limit.gcra(1, -1), ra.BadArgument),
        ("period negative td", lambda: ra.Limit.gcra(1, timedelta(seconds=-1)), ra.BadArgument),
        ("period 0", lambda: ra.Limit.gcra(1, 0), ra.BadArgument),
        ("period a str", lambda: ra.Limit.gcra(1, "1s"), TypeError),  # type: ignore[arg-type]
        ("burst on fixed window", lambda: ra.Limit.fixed_window(1, 1, burst=2), ra.BadArgument),
        ("bad name", lambda: ra.Limit.gcra(1, 1, name="a b"), ra.BadArgument),
        ("unknown algorithm", lambda: ra.Limit("leaky", 1, 1), ra.BadArgument),
        ("empty policy", lambda: ra.Policy([]), ra.BadArgument),
        ("same names", lambda: ra.Policy([ra.Limit.gcra(1, 1), ra.Limit.gcra(2, 1)]), ra.BadArgument),
        ("bad namespace", lambda: ra.RateLimiter(client, "", ra.Limit.gcra(1, 1)), ra.BadArgument),
        ("bounds reversed", lambda: ra.Bounds(5, 1), ra.BadArgument),
        ("bounds beyond 2^53", lambda: ra.Bounds(0, 2**60), ra.BadArgument),
        ("delta beyond i64", lambda: quotas.add("q", 2**64, (0, 1)), ra.BadArgument),
        ("ttl 0", lambda: quotas.add("q", 1, (0, 5), ttl=0), ra.BadArgument),
        ("dedup ttl too long", lambda: dedup.first_seen("e", 400 * DAY), ra.BadArgument),
        ("dedup empty token", lambda: dedup.first_seen("e", 1, token=""), ra.BadArgument),
        ("fence 0", lambda: fenced.write("r", 0, [ra.Write.delete(fenced.key("r", "x"))]), ra.BadArgument),
        ("untagged write", lambda: fenced.write("r", 1, [ra.Write.delete("other")]), ra.BadArgument),
        ("no writes", lambda: fenced.write("r", 1, []), ra.BadArgument),
        ("write list a str", lambda: ra.Write.sadd("k", "abc"), TypeError),
        ("pool size 0", lambda: ra.connect("redis://127.0.0.1:1", pool_size=0), ra.BadArgument),
        ("bad delivery", lambda: ra.connect("redis://127.0.0.1:1", delivery="x"), ra.BadArgument),  # type: ignore[arg-type]
        ("bad url", lambda: ra.connect("nonsense://x"), ra.RedisAtomicError),
        ("cert without key", lambda: ra.TlsOptions(client_cert_file="c.pem"), ra.BadArgument),
    ]


def test_bad_inputs_raise_typed_errors(client: ra.Client, redis_server: RedisServer) -> None:
    """Each bad input raises its class; nothing is written to the server."""
    for what, call, expected in bad_calls(client):
        with pytest.raises(expected) as info:
            call()
        if isinstance(info.value, ra.RedisAtomicError) and not isinstance(
            info.value, ra.ConnectionError
        ):
            assert info.value.nothing_ran, what
    assert redis_server.command("DBSIZE") == 0
    # BadArgument is a ValueError; CostExceedsBurst its own class (a ValueError too, not a
    # BadArgument, as the library's Error::CostExceedsBurst) with its figures.
    with pytest.raises(ValueError):
        ra.Limit.gcra(0, 1)
    with pytest.raises(ra.CostExceedsBurst) as info:
        ra.RateLimiter(client, "t", ra.Limit.gcra(5, 1)).consume("k", 9)
    assert (info.value.cost, info.value.burst, info.value.code) == (9, 5, "cost_exceeds_burst")
    assert isinstance(info.value, ValueError) and not isinstance(info.value, ra.BadArgument)


def test_connection_refused_is_typed(redis_server: RedisServer) -> None:
    """Nothing listening: a connection error (a builtin ConnectionError too), nothing ran."""
    port = redis_server.port
    with RedisServer(redis_server.binary) as other:
        url = other.url
    assert port != other.port
    with pytest.raises(ra.ConnectionError) as info:
        ra.connect(url, timeout=1)
    e = info.value
    assert isinstance(e, ConnectionError) and e.code == "connection"
    # A failed connect ran nothing, and a refused one may clear by itself (a server starting).
    assert e.nothing_ran and e.transient and e.retry_safe and not e.timed_out


def test_every_attempt_timed_out_says_timed_out(client: ra.Client, redis_server: RedisServer) -> None:
    """A paused server and a retry-safe call allowed two attempts: both time out (the second
    on a fresh connection that never answers), and the error says timed_out, as one attempt
    does."""
    stalled = ra.connect(
        redis_server.url, timeout=0.3, retry=ra.RetryPolicy(max_attempts=2, deadline=30)
    )
    limiter = ra.RateLimiter(stalled, "t", ra.Limit.gcra(5, 1))
    limiter.consume("warm", request_id="w")
    with redis_server.stalled():
        with pytest.raises(ra.OutcomeUnknown) as info:
            limiter.consume("k", request_id="r-2")
    e = info.value
    assert e.attempts == 2 and e.timed_out and e.retry_safe and not e.nothing_ran
    assert e.code == "outcome_unknown"


def test_stalled_server_is_an_unknown_outcome(client: ra.Client, redis_server: RedisServer) -> None:
    """A stopped server: the call ends with OutcomeUnknown (timed out, not retry-safe without a
    request id, retry-safe with one) within the configured timeout and retries."""
    timeout = 0.3
    stalled = ra.connect(redis_server.url, timeout=timeout, retry=ra.RetryPolicy.none())
    limiter = ra.RateLimiter(stalled, "t", ra.Limit.gcra(5, 1))
    limiter.consume("warm")  # connected, scripts loaded
    with redis_server.stalled():
        started = time.monotonic()
        with pytest.raises(ra.OutcomeUnknown) as info:
            limiter.consume("k")
        elapsed = time.monotonic() - started
        with pytest.raises(ra.OutcomeUnknown) as with_id:
            limiter.consume("k", request_id="r-1")
    e = info.value
    assert e.timed_out and e.attempts == 1 and not e.retry_safe and not e.nothing_ran
    assert not e.transient
    assert e.code == "outcome_unknown"
    assert with_id.value.retry_safe and with_id.value.timed_out
    # The deadline is the client's: far below any default (a generous bound, not a benchmark).
    assert elapsed < timeout + 2.0
    # After the stall the client works again (the timed-out connection was replaced).
    assert isinstance(limiter.consume("after"), ra.Allowed)


def test_async_stall_is_an_unknown_outcome(redis_server: RedisServer) -> None:
    """The asyncio face raises the same OutcomeUnknown."""

    async def main() -> ra.OutcomeUnknown:
        client = await ra.AsyncClient.connect(
            redis_server.url, timeout=0.3, retry=ra.RetryPolicy.none()
        )
        quotas = ra.AsyncQuotas(client, "t")
        await quotas.get("warm")
        with redis_server.stalled():
            try:
                await quotas.add("q", 1, (0, 10))
            except ra.OutcomeUnknown as e:
                return e
        raise AssertionError("no OutcomeUnknown")

    e = asyncio.run(main())
    assert e.timed_out and not e.retry_safe


def test_script_errors_are_typed(client: ra.Client, redis_server: RedisServer) -> None:
    """A key of another type is WrongType; the error keeps its class and code."""
    redis_server.command("HSET", "t:quota:v1:{q}", "f", "v")
    with pytest.raises(ra.WrongType) as info:
        ra.Quotas(client, "t").get("q")
    assert info.value.code == "wrong_type"


def test_every_documented_spelling_is_accepted(redis_url: str) -> None:
    """Algorithm names in kebab-case and snake_case (the library parses both), deliveries
    ``eval`` / ``evalsha`` and ``functions`` / ``fcall``, reported as ``eval`` / ``functions``."""
    for algorithm in ra.ALGORITHMS:
        kebab = algorithm.name
        for spelling in (kebab, kebab.replace("-", "_")):
            assert ra.Limit(spelling, 10, 1).algorithm == algorithm, spelling
    assert ra.Limit("sliding_log", 10, 1).algorithm == ra.Algorithm.SLIDING_LOG
    for spelling, name in [
        ("eval", "eval"),
        ("evalsha", "eval"),
        ("functions", "functions"),
        ("fcall", "functions"),
    ]:
        with ra.connect(redis_url, delivery=spelling) as client:  # type: ignore[arg-type]
            assert f"delivery={name}," in repr(client), spelling


def test_retry_safe_is_the_calls_own(client: ra.Client, redis_server: RedisServer) -> None:
    """Whether a resend is safe is set by the library per call: an acquire or a dedup with the
    caller's token, or an add with a request id, may be resent; the same without them may
    not."""
    # Each timed-out call discards its connection: one pooled connection per call below.
    stalled = ra.connect(
        redis_server.url, timeout=0.2, retry=ra.RetryPolicy.none(), pool_size=8
    )
    locks, quotas = ra.Locks(stalled, "t"), ra.Quotas(stalled, "t")
    dedup = ra.Dedup(stalled, "t")
    locks.acquire("warm", 1, token="w")
    quotas.add("warm", 1, (0, 5), request_id="w")
    dedup.first_seen("warm", 1)
    calls: list[tuple[str, Callable[[], Any], bool]] = [
        ("acquire with a token", lambda: locks.acquire("r", 10, token="mine"), True),
        ("acquire without", lambda: locks.acquire("r", 10), False),
        ("add with a request id", lambda: quotas.add("q", 1, (0, 5), request_id="r"), True),
        ("add without", lambda: quotas.add("q", 1, (0, 5)), False),
        ("first_seen with a token", lambda: dedup.first_seen("e", 10, token="mine"), True),
        ("first_seen without", lambda: dedup.first_seen("e", 10), False),
    ]
    with redis_server.stalled():
        for what, call, safe in calls:
            with pytest.raises(ra.OutcomeUnknown) as info:
                call()
            assert info.value.retry_safe is safe and info.value.timed_out, what
