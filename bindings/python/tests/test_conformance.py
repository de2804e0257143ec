"""The conformance vectors (``conformance/vectors.json``, see its README) that apply to the
Python package, run through its public API: key derivation by each primitive's ``keys()``,
the algorithm and delivery spellings, and the classification of failures — every server error
reply of the file, a refused connect and timeouts after sending, staged on a real server.

The file is the contract every face runs: a disagreement names the case's id, what the file
expects and what the package answered. ``REDIS_ATOMIC_VECTORS`` points at another copy."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

import redis_atomic as ra
from redis_atomic import _native
from redis_atomic.testing import RedisServer

VECTORS = Path(
    os.environ.get(
        "REDIS_ATOMIC_VECTORS",
        Path(__file__).resolve().parents[3] / "conformance" / "vectors.json",
    )
)
# Sections and calls with no Python API: the entry limiter (not bound), the raw key builder and
# the slot function (every key below is checked against its slot instead).
NOT_BOUND = {"entries.keys", "keyspace.key", "slot"}
FACTS = ("nothing_ran", "transient", "retry_safe", "timed_out")


def vectors() -> dict[str, Any]:
    with open(VECTORS, encoding="utf-8") as f:
        loaded: dict[str, Any] = json.load(f)
    return loaded


def text(v: Any) -> bytes:
    """A vector's byte string: a JSON string's UTF-8, or ``{"hex": ...}``."""
    return bytes.fromhex(v["hex"]) if isinstance(v, dict) else str(v).encode()


def slot(key: str) -> int:
    """CRC16/XMODEM of the key's hash tag, mod 16384 (the cluster's slot)."""
    data = key.encode()
    start = data.find(b"{")
    if start >= 0:
        end = data.find(b"}", start + 1)
        if end > start + 1:
            data = data[start + 1 : end]
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc % 16384


def limit(spec: dict[str, Any]) -> ra.Limit:
    return ra.Limit(
        spec["algorithm"],
        spec["limit"],
        spec["period_ms"] / 1000,
        burst=spec.get("burst"),
        name=spec.get("name"),
    )


def derive(client: ra.Client, call: str, i: dict[str, Any]) -> dict[str, Any]:
    """The keys the package derives for one case, by the primitive's own ``keys()``."""
    ns = i["namespace"]
    if call == "lock.keys":
        k: Any = ra.Locks(client, ns).keys(i["resource"])
        return {"lock": k.lock, "fence": k.fence}
    if call == "semaphore.keys":
        k = ra.Semaphore(client, ns, i["name"], 1).keys
        return {"permits": k.permits, "holders": k.holders, "fence": k.fence}
    if call == "idempotency.keys":
        return {"record": ra.Idempotency(client, ns).keys(i["scope"], text(i["key"])).record}
    if call == "ratelimit.keys":
        policy = ra.Policy([limit(spec) for spec in i["limits"]])
        k = ra.RateLimiter(client, ns, policy).keys(i["identity"], i["request_id"])
        return {"limits": k.limits, "request": k.request}
    if call == "quota.keys":
        k = ra.Quotas(client, ns).keys(i["name"], i["request_id"])
        return {"value": k.value, "request": k.request}
    if call == "queue.keys":
        queue = ra.Queue(client, ns, i["name"])
        k = queue.keys
        names = ("due", "inflight", "dead", "done", "meta", "payload", "errors", "claims")
        return {n: getattr(k, n) for n in names} | {"claim": queue.claim_key(i["claim_id"])}
    if call == "dedup.keys":
        return {"seen": ra.Dedup(client, ns).keys(i["event_id"]).seen}
    if call == "fenced.keys":
        return {"fence": ra.FencedWrites(client, ns).fence_key(i["resource"])}
    if call == "fenced.key":
        return {"key": ra.FencedWrites(client, ns).key(i["resource"], i["part"])}
    raise AssertionError(f"a call this runner does not know: {call}")


def expected(case: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """What the case expects; a case without any expectation is a defect of the file."""
    want = {f: case[f] for f in fields if f in case}
    assert want, f"{case['id']}: the case expects nothing"
    return want


def test_keys(client: ra.Client) -> None:
    for case in vectors()["keys"]:
        if case["call"] in NOT_BOUND:
            continue
        want = expected(case, ("key", "keys", "slot", "error"))
        try:
            got = derive(client, case["call"], case["input"])
        except ra.BadArgument as e:
            assert want.get("error") == e.code, f"{case['id']}: expected {want}, got {e!r}"
            continue
        assert "error" not in want, f"{case['id']}: expected {want}, got {got}"
        if "key" in want:
            assert got == {"key": want["key"]}, f"{case['id']}: expected {want}, got {got}"
        else:
            assert got == want["keys"], f"{case['id']}: expected {want['keys']}, got {got}"
        every = [k for v in got.values() for k in (v if isinstance(v, list) else [v]) if k]
        assert {slot(k) for k in every} == {want["slot"]}, f"{case['id']}: slots of {every}"


def test_spellings(redis_url: str) -> None:
    for case in vectors()["spellings"]:
        want = expected(case, ("canonical", "code", "error"))
        try:
            if case["kind"] == "algorithm":
                got = ra.Limit(case["input"], 10, 1).algorithm.name
            else:
                with ra.connect(redis_url, delivery=case["input"]) as client:
                    got = repr(client).split("delivery=")[1].split(",")[0]
        except ra.BadArgument as e:
            assert want.get("error") == e.code, f"{case['id']}: expected {want}, got {e!r}"
            continue
        assert want.get("canonical") == got, f"{case['id']}: expected {want}, got {got!r}"


def facts(e: ra.RedisAtomicError) -> dict[str, Any]:
    """The error as the file spells it: its code under ``error``, and its facts."""
    out = {"error": e.code} | {f: getattr(e, f) for f in FACTS}
    if isinstance(e, ra.OutcomeUnknown):
        out["attempts"] = e.attempts
    return out


def check(case: dict[str, Any], e: ra.RedisAtomicError) -> None:
    want = expected(case, ("error", *FACTS, "attempts"))
    got = {k: v for k, v in facts(e).items() if k in want}
    assert got == want, f"{case['id']}: expected {want}, got {facts(e)}"


def operation(client: ra.Client, case: dict[str, Any]) -> Callable[[], Any]:
    """The case's operation through the public API."""
    i = case["input"]
    if case["operation"] == "ratelimit.consume":
        limiter = ra.RateLimiter(client, i["namespace"], ra.Policy([limit(s) for s in i["limits"]]))
        return lambda: limiter.consume(i["identity"], i["cost"])
    locks = ra.Locks(client, i["namespace"])
    token = i.get("token")
    return lambda: locks.acquire(i["resource"], i["ttl_ms"] / 1000, token=token)


def test_errors(redis_server: RedisServer) -> None:
    for case in vectors()["errors"]:
        if "reply" in case:
            code, _, message = case["reply"]["error"].partition(" ")
            got = _native.classify_server_error(code, message)
            assert isinstance(got, ra.RedisAtomicError), case["id"]
            check(case, got)
        elif case["event"] == "connect_refused":
            with RedisServer(redis_server.binary) as gone:
                url = gone.url
            with pytest.raises(ra.RedisAtomicError) as info:
                ra.connect(url, timeout=1)
            check(case, info.value)
        else:
            redis_server.command("FLUSHALL")
            settings = case["client"]
            retry = ra.RetryPolicy(max_attempts=settings["max_attempts"], deadline=30)
            with ra.connect(
                redis_server.url, timeout=settings["timeout_ms"] / 1000, retry=retry
            ) as client:
                run = operation(client, case)
                run()  # connected, scripts loaded
                redis_server.command("FLUSHALL")
                with redis_server.stalled():
                    with pytest.raises(ra.RedisAtomicError) as info:
                        run()
            check(case, info.value)
