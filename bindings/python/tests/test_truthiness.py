"""Truthiness, from one list: every refusal is falsy, every success (and every handle) truthy,
and every other value the package returns defines no truthiness of its own (always truthy).
The walk covers every result class the package exports, so a new one must be placed here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import redis_atomic as ra

VOCABULARY = Path(__file__).resolve().parents[3] / "conformance" / "vocabulary.json"

# The vocabulary's refusals: nothing happened, and `if result:` reads "if it did".
REFUSALS: list[Any] = [
    ra.Limited(1, 1),
    ra.Held(1),
    ra.Full(1),
    ra.Lost(),
    ra.InProgress(1),
    ra.Mismatch(),
    ra.Empty(1),
    ra.Idle(),
    ra.Exists("queued"),
    ra.NotDead(),
    ra.Refused(3),
    ra.Stale(7),
    ra.Kept(5),
    ra.JobUnknown(),
]

# The vocabulary's successes: what was asked happened.
SUCCESSES: list[Any] = [
    ra.Allowed(1, 1),
    ra.Applied(3),
    ra.Raised(5),
    ra.Written(7, 1),
    ra.Extended(1, 1),
    ra.Released(1),
    ra.Stored(),
    ra.Replay(ra.Response(200)),
    ra.Enqueued(0),
    ra.Acked(),
    ra.Retrying(1),
    ra.Dead(),
    ra.Requeued(),
]

# Handles: what a lease primitive grants (truthy while held and after; checked live below).
HANDLES = {
    ra.LockGuard,
    ra.AsyncLockGuard,
    ra.Permit,
    ra.AsyncPermit,
    ra.Claim,
    ra.AsyncClaim,
    ra.Job,
    ra.AsyncJob,
}


def exported_result_classes() -> set[type]:
    """Every class of ``redis_atomic`` that is a returned value: it matches by position
    (``__match_args__``), or it is a handle."""
    out = set()
    for name in ra.__all__:
        obj = getattr(ra, name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            if hasattr(obj, "__match_args__") or obj in HANDLES:
                out.add(obj)
    return out


def test_every_refusal_is_falsy_and_every_success_truthy() -> None:
    for value in REFUSALS:
        assert not value, f"{value!r} is a refusal: falsy"
    for value in SUCCESSES:
        assert value, f"{value!r} is a success: truthy"
    # A verdict reads as its decision.
    allowed = ra.Verdict(ra.Allowed(1, 1), [], False)
    limited = ra.Verdict(ra.Limited(1, 1), [], False)
    assert allowed and not limited


def test_the_lists_are_the_vocabularys() -> None:
    """The table (conformance/vocabulary.json) says which outcome is a refusal and which a
    success; these lists say the same of every Python class that spells one."""
    table = json.loads(VOCABULARY.read_text())
    said: dict[str, set[str]] = {"refusal": set(), "success": set()}
    for primitive in table["primitives"]:
        for word in primitive["words"]:
            python = word.get("python")
            if word["kind"] == "outcome" and word.get("result") in said and python:
                said[word["result"]].add(python.split(".")[0])
    refusals = {type(v).__name__ for v in REFUSALS}
    successes = {type(v).__name__ for v in SUCCESSES} | {h.__name__ for h in HANDLES}
    assert said["refusal"] == refusals, said["refusal"] ^ refusals
    assert said["success"] <= successes, said["success"] - successes


def test_every_result_class_is_placed() -> None:
    """Each exported result class is a refusal, a success, a handle or a verdict, or else a
    plain value that defines no truthiness of its own (so it is truthy)."""
    placed = {type(v) for v in REFUSALS + SUCCESSES} | HANDLES | {ra.Verdict}
    for cls in exported_result_classes() - placed:
        assert "__bool__" not in vars(cls) and "__len__" not in vars(cls), (
            f"{cls.__name__} defines truthiness: list it as a refusal or a success"
        )


def test_handles_are_truthy(client: ra.Client) -> None:
    guard = ra.Locks(client, "t").acquire("r", 10)
    permit = ra.Semaphore(client, "t", "s", 1).acquire(10)
    claim = ra.Idempotency(client, "t").begin("s", "k", ["f"])
    queue = ra.Queue(client, "t", "q")
    queue.enqueue("j", b"x")
    jobs = queue.claim("w", 10)
    assert isinstance(jobs, list)
    for handle in [guard, permit, claim, *jobs]:
        assert type(handle) in HANDLES and handle
