"""Idempotency keys through the package: begin/complete/fail, replay, mismatch, in progress, by
parts, and the decorator's contract, with each key's side effect counted under duplicates."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from typing import Any, List

import pytest

import redis_atomic as ra

THREADS = 16


def test_begin_complete_replay_mismatch(client: ra.Client) -> None:
    store = ra.Idempotency(client, "i", ttl=30, result_ttl=600)
    assert (store.ttl, store.result_ttl) == (30.0, 600.0)
    claim = store.begin("charges", "k1", ["POST", b"/charges", 5])
    assert isinstance(claim, ra.Claim) and not claim.is_takeover
    busy = store.begin("charges", "k1", ["POST", b"/charges", 5])
    assert isinstance(busy, ra.InProgress) and not busy and 29 < busy.retry_after <= 30
    assert store.begin("charges", "k1", ["POST", b"/charges", 6]) == ra.Mismatch()
    response = ra.Response(201, b"\x00body\xff", headers=[("content-type", "application/json")])
    assert claim.complete(response) == ra.Stored()
    replay = store.begin("charges", "k1", ra.Fingerprint.of("POST", b"/charges", 5))
    assert replay == ra.Replay(response, failed=False) and isinstance(replay, ra.Replay)
    assert replay.response.headers == [("content-type", b"application/json")]
    assert replay.response.body == b"\x00body\xff" and replay.response.status == 201
    # A repeat of the end by parts answers Stored again; the handle itself is ended.
    assert store.complete("charges", "k1", claim.token, claim.fence, response) == ra.Stored()
    with pytest.raises(ra.HandleEnded):
        claim.fail()
    # Keys are digests: user bytes never reach key names.
    assert store.keys("charges", "k1").record.startswith("i:idem:v1:{")


def test_fail_retryable_frees_final_is_replayed(client: ra.Client) -> None:
    store = ra.Idempotency(client, "f")
    first = store.begin("s", b"k", ["x"])
    assert isinstance(first, ra.Claim)
    assert first.fail() == ra.Stored()
    second = store.begin("s", b"k", ["x"])
    assert isinstance(second, ra.Claim) and second.fence > first.fence
    stored = ra.Response(402, reference="s3://bucket/receipt-1")
    assert second.fail(stored) == ra.Stored()
    replay = store.begin("s", b"k", ["x"])
    assert replay == ra.Replay(stored, failed=True)
    assert isinstance(replay, ra.Replay) and replay.response.reference == "s3://bucket/receipt-1"


def test_by_parts_and_takeover(client: ra.Client) -> None:
    """A claim whose lease ran out is taken over; the old executor's extend and complete by
    parts are Lost and change nothing."""
    store = ra.Idempotency(client, "p", ttl=0.05)
    old = store.begin("s", "k", ["a"])
    assert isinstance(old, ra.Claim)
    token, fence = old.token, old.fence
    assert store.extend("s", "k", token, fence, 0.05) == ra.Extended(fence, 0.05)
    newer: Any = None
    for _ in range(2000):  # bounded: the lease (50 ms) runs out on the server's clock
        newer = store.begin("s", "k", ["a"])
        if isinstance(newer, ra.Claim):
            break
    assert isinstance(newer, ra.Claim) and newer.is_takeover and newer.fence > fence
    assert store.extend("s", "k", token, fence, 10) == ra.Lost()
    assert store.complete("s", "k", token, fence, ra.Response(200, b"old")) == ra.Lost()
    assert store.fail("s", "k", token, fence) == ra.Lost()
    assert newer.complete(ra.Response(200, b"new")) == ra.Stored()
    assert store.begin("s", "k", ["a"]) == ra.Replay(ra.Response(200, b"new"))


def test_side_effect_once_under_concurrent_duplicates(client: ra.Client) -> None:
    """8 keys, 16 threads calling the decorated function with every key: each key's side
    effect runs exactly once, and every caller gets the first caller's value."""
    store = ra.Idempotency(client, "d")
    effects: Counter[str] = Counter()
    lock = threading.Lock()

    @store.idempotent(scope="orders", wait=30)
    def place(item: str, quantity: int, idempotency_key: str) -> dict[str, Any]:
        with lock:
            effects[idempotency_key] += 1
            n = effects[idempotency_key]
        return {"item": item, "quantity": quantity, "n": n}

    results: List[dict[str, Any]] = []
    start = threading.Barrier(THREADS)

    def caller() -> None:
        start.wait()
        for k in range(8):
            got = place("book", 2, idempotency_key=f"order-{k}")
            with lock:
                results.append(got)

    threads = [threading.Thread(target=caller) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert effects == Counter({f"order-{k}": 1 for k in range(8)})
    assert len(results) == THREADS * 8
    assert all(r == {"item": "book", "quantity": 2, "n": 1} for r in results)


def test_decorator_contract(client: ra.Client) -> None:
    """In progress without wait, mismatch, None key, exceptions free the key, bytes codec,
    unencodable arguments, a final failure stored by other code."""
    store = ra.Idempotency(client, "c")
    calls: List[str] = []
    inside = threading.Event()
    release = threading.Event()

    @store.idempotent(scope="s")
    def slow(x: int, idempotency_key: str | None = None) -> int:
        calls.append(f"slow {x}")
        inside.set()
        assert release.wait(30)
        return x * 2

    first: List[int] = []
    runner = threading.Thread(target=lambda: first.append(slow(2, idempotency_key="k")))
    runner.start()
    assert inside.wait(30)
    with pytest.raises(ra.IdempotencyInProgress) as busy:
        slow(2, idempotency_key="k")
    assert busy.value.retry_after > 0 and busy.value.nothing_ran
    release.set()
    runner.join()
    assert first == [4] and slow(2, idempotency_key="k") == 4 and calls == ["slow 2"]
    with pytest.raises(ra.IdempotencyMismatch):
        slow(3, idempotency_key="k")
    assert slow(5) == 10 and calls == ["slow 2", "slow 5"]  # no key: no record

    @store.idempotent(scope="s2", key=lambda n, **_: f"n-{n}")
    def flaky(n: int) -> int:
        calls.append(f"flaky {n}")
        if len(calls) == 3:
            raise ValueError("first attempt fails")
        return n

    with pytest.raises(ValueError):
        flaky(1)
    assert flaky(1) == 1 and flaky(1) == 1
    assert calls[2:] == ["flaky 1", "flaky 1"]  # the failure freed the key: one more run

    @store.idempotent(scope="s3", encode=lambda b: b, decode=lambda b: b, watch=False)
    def raw(idempotency_key: bytes) -> bytes:
        return b"\x00\x01"

    assert raw(b"k") == b"\x00\x01" and raw(b"k") == b"\x00\x01"

    @store.idempotent(scope="s4")
    def unencodable(thing: object, idempotency_key: str) -> None:
        return None

    with pytest.raises(TypeError, match="fingerprint="):
        unencodable(object(), idempotency_key="k")

    @store.idempotent(scope="s5", fingerprint=lambda x, idempotency_key: [str(x)])
    def final(x: int, idempotency_key: str) -> int:
        return x

    # Another program stored a final failure under the key the function would use.
    fp = ra.Fingerprint.of(f"{final.__module__}.{final.__qualname__}", "1")
    claim = store.begin("s5", "k", fp)
    assert isinstance(claim, ra.Claim)
    assert claim.fail(ra.Response(409, b"conflict")) == ra.Stored()
    with pytest.raises(ra.IdempotencyFailed) as failed:
        final(1, idempotency_key="k")
    assert failed.value.response == ra.Response(409, b"conflict")
    with pytest.raises(TypeError):
        store.idempotent(scope="s6")(lambda y: y)  # no idempotency_key parameter


def test_async_side_effect_once(redis_url: str) -> None:
    """16 asyncio tasks call an async decorated function with 4 keys: one run per key; the
    direct API gives exactly one claim among concurrent begins."""

    async def main() -> tuple[Counter[str], List[int], int]:
        client = await ra.AsyncClient.connect(redis_url)
        store = ra.AsyncIdempotency(client, "ad")
        effects: Counter[str] = Counter()

        @store.idempotent(scope="jobs", wait=30)
        async def work(n: int, idempotency_key: str) -> int:
            effects[idempotency_key] += 1
            await asyncio.sleep(0)  # suspended inside: duplicates arrive meanwhile
            return n * 10

        got = await asyncio.gather(
            *(work(k, idempotency_key=f"key-{k}") for _ in range(THREADS) for k in range(4))
        )
        begins = await asyncio.gather(*(store.begin("x", "k", ["a"]) for _ in range(THREADS)))
        claims = [b for b in begins if isinstance(b, ra.AsyncClaim)]
        assert len(claims) == 1
        assert all(isinstance(b, ra.InProgress) for b in begins if b is not claims[0])
        assert await claims[0].complete(ra.Response(200, b"done")) == ra.Stored()
        replay = await store.begin("x", "k", ["a"])
        assert replay == ra.Replay(ra.Response(200, b"done"))
        return effects, got, len(claims)

    effects, got, _ = asyncio.run(main())
    assert effects == Counter({f"key-{k}": 1 for k in range(4)})
    assert sorted(got) == sorted([k * 10 for _ in range(THREADS) for k in range(4)])
