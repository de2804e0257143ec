"""Rate limits through the package: exact admission counts under concurrency for every
algorithm, request-id replays, policies, and decisions as values."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest

import redis_atomic as ra

LIMIT = 50
# 366 days: no fixed window boundary and no refill of the bucket algorithms during a test.
PERIOD = timedelta(days=366)
WORKERS = 16
PER_WORKER = 10  # 160 attempts against a limit of 50


def limit_of(algorithm: ra.Algorithm) -> ra.Limit:
    return ra.Limit(algorithm, LIMIT, PERIOD)


@pytest.mark.parametrize("algorithm", ra.ALGORITHMS, ids=lambda a: a.name)
def test_exactly_limit_admitted_from_threads(client: ra.Client, algorithm: ra.Algorithm) -> None:
    """16 threads race 160 consumes of one identity: exactly `limit` are admitted."""
    limiter = ra.RateLimiter(client, "t", limit_of(algorithm))
    admitted: list[int] = []
    start = threading.Barrier(WORKERS)

    def worker() -> None:
        start.wait()
        n = sum(1 for _ in range(PER_WORKER) if limiter.consume("hot"))
        admitted.append(n)

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(admitted) == WORKERS
    assert sum(admitted) == LIMIT
    after = limiter.consume("hot")
    assert isinstance(after, ra.Limited) and after.retry_after > 0


@pytest.mark.parametrize("algorithm", ra.ALGORITHMS, ids=lambda a: a.name)
def test_exactly_limit_admitted_from_tasks(redis_url: str, algorithm: ra.Algorithm) -> None:
    """16 asyncio tasks race 160 consumes of one identity: exactly `limit` are admitted."""

    async def main() -> int:
        client = await ra.AsyncClient.connect(redis_url)
        limiter = ra.AsyncRateLimiter(client, "t", limit_of(algorithm))

        async def worker() -> int:
            return sum([1 for _ in range(PER_WORKER) if await limiter.consume("hot")])

        counts = await asyncio.gather(*(worker() for _ in range(WORKERS)))
        return sum(counts)

    assert asyncio.run(main()) == LIMIT


def test_refusal_is_a_value_and_charges_nothing(client: ra.Client) -> None:
    """A refused request is `Limited` (falsy), not an exception, and is charged to no limit."""
    limiter = ra.RateLimiter(client, "t", ra.Limit.fixed_window(3, PERIOD))
    assert [bool(limiter.consume("k", 1)) for _ in range(3)] == [True] * 3
    refused = limiter.consume("k", 2)
    assert isinstance(refused, ra.Limited) and not refused.allowed
    # A policy of two limits: the second refuses, the first is not charged.
    wide = ra.Limit.gcra(100, PERIOD, name="wide")
    narrow = ra.Limit.fixed_window(1, PERIOD, name="narrow")
    both = ra.RateLimiter(client, "p", ra.Policy([wide, narrow]))
    first = both.consume_detailed("k")
    assert isinstance(first.decision, ra.Allowed)
    assert [s.remaining for s in first.limits] == [99, 0]
    second = both.consume_detailed("k")
    assert isinstance(second.decision, ra.Limited)
    assert second.limits[0].remaining == 99  # not charged by the refused request


@pytest.mark.parametrize("algorithm", ra.ALGORITHMS, ids=lambda a: a.name)
def test_request_id_replays_exactly(client: ra.Client, algorithm: ra.Algorithm) -> None:
    """A repeated request id gets the first decision back, marked replayed, charged once."""
    limiter = ra.RateLimiter(client, "t", ra.Limit(algorithm, 5, PERIOD))
    first = limiter.consume_detailed("k", 2, request_id="req-1")
    again = limiter.consume_detailed("k", 2, request_id="req-1")
    assert isinstance(first.decision, ra.Allowed) and not first.replayed
    assert again.replayed and isinstance(again.decision, ra.Allowed)
    assert again.decision.remaining == first.decision.remaining == 3
    # Charged once: 3 units left, so 3 more admitted and the 4th refused.
    assert [bool(limiter.consume("k")) for _ in range(4)] == [True, True, True, False]
    # The plain decision replays too (its remaining as recorded; nothing charged).
    replay = limiter.consume("k", 2, request_id="req-1")
    assert isinstance(replay, ra.Allowed) and replay.remaining == 3


def test_async_request_id_replays(redis_url: str) -> None:
    """The asyncio face replays request ids the same way."""

    async def main() -> tuple[ra.Verdict, ra.Verdict]:
        client = await ra.AsyncClient.connect(redis_url)
        limiter = ra.AsyncRateLimiter(client, "t", ra.Limit.gcra(5, PERIOD))
        first = await limiter.consume_detailed("k", request_id="r")
        return first, await limiter.consume_detailed("k", request_id="r")

    first, again = asyncio.run(main())
    assert not first.replayed and again.replayed
    assert first.decision == ra.Allowed(4, first.decision.reset_after)
    assert isinstance(again.decision, ra.Allowed) and again.decision.remaining == 4


def test_results_are_dataclass_like() -> None:
    """Result values compare by value, hash, repr as their constructor, and `match`."""
    a = ra.Allowed(remaining=3, reset_after=timedelta(milliseconds=1500))
    assert a == ra.Allowed(3, 1.5) and hash(a) == hash(ra.Allowed(3, 1.5))
    assert repr(a) == "Allowed(remaining=3, reset_after=1.5)"
    other: object = ra.Limited(1.5, 1.5)
    assert a != other
    match ra.Limited(retry_after=0.25, reset_after=1.0):
        case ra.Limited(retry_after, _):
            assert retry_after == 0.25
        case _:
            pytest.fail("Limited did not match")
    refused: object = ra.Refused(5)
    assert ra.Applied(5) == ra.Applied(value=5) and ra.Applied(5) != refused


def test_keys_and_limits(client: ra.Client) -> None:
    """Keys and limits read back as the library builds them."""
    limit = ra.Limit.token_bucket(10, 1, burst=20, name="api")
    assert (limit.limit, limit.burst, limit.period, limit.name) == (10, 20, 1.0, "api")
    assert limit.interval == pytest.approx(0.1)
    assert limit.algorithm == ra.Algorithm.TOKEN_BUCKET and limit.algorithm.name == "token-bucket"
    assert ra.Limit("gcra", 5, 1) == ra.Limit.gcra(5, 1)
    keys = ra.RateLimiter(client, "app", limit).keys("user-1", "req-1")
    assert keys.limits[0].startswith("app:rl:v1:{") and keys.limits[0].endswith("}:api:tb")
    assert keys.request is not None and keys.request.startswith("app:rl:v1:{")
    assert [a.name for a in ra.ALGORITHMS] == [
        "fixed-window",
        "anchored-window",
        "sliding-log",
        "sliding-window",
        "token-bucket",
        "gcra",
    ]
