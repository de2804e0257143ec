"""The ``idempotent`` decorator: a function (or coroutine function) that runs once per
idempotency key, however often it is called with that key.

What it does, exactly:

* **Key.** ``key="idempotency_key"`` (default) names the parameter holding the key (``str`` or
  ``bytes``); or pass a callable that gets the call's arguments and returns the key. A key of
  ``None`` calls the function without any record (an optional ``Idempotency-Key`` header).
* **Fingerprint.** By default the function's qualified name and its other arguments (bound to
  the signature, defaults applied) as canonical JSON: a repeat of the key with other arguments
  is refused (``IdempotencyMismatch``); arguments JSON cannot encode raise ``TypeError`` (pass
  ``fingerprint=``, a callable returning the parts to digest).
* **First caller.** Claims the key, runs the function (its claim renewed by a watchdog while it
  runs, unless ``watch=False``), stores the return value as ``Response(200, encode(value))`` and
  returns the value itself. ``encode``/``decode`` default to JSON (``json.dumps`` with no
  spaces, UTF-8): the stored value is what JSON keeps (tuples come back as lists, dict keys as
  strings). Pass ``encode=bytes``-returning and ``decode`` functions for anything else; pickle
  is deliberately not offered (unpickling what Redis holds runs code). If the function raises
  (``CancelledError`` included), the claim is failed as retryable (the key is freed, nothing is
  stored) and the exception propagates: a retry runs the function again.
* **Duplicates.** A duplicate after the first finished gets ``decode`` of the stored value. A
  duplicate while the first runs gets ``IdempotencyInProgress(retry_after)`` at once, or with
  ``wait=`` seconds keeps asking (5 ms, doubling to 200 ms, never past ``wait``) and returns
  the stored value once there. A stored final failure (``fail(response)`` by other code on the
  same key) raises ``IdempotencyFailed(response)``.
* **Lost claim.** If the claim was lost while the function ran (the process paused past the
  lease and a duplicate took it over), the result is not stored (``complete`` answers
  ``Lost``); this caller still gets its value.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import time
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar, Union

from ._errors import IdempotencyFailed, IdempotencyInProgress, IdempotencyMismatch
from ._native import Fingerprint, InProgress, Mismatch, Replay, Response

__all__ = ["idempotent", "json_encode", "json_decode"]

F = TypeVar("F", bound=Callable[..., Any])
Parts = Sequence[Union[str, bytes, int]]
FIRST_PAUSE, MAX_PAUSE = 0.005, 0.2


def json_encode(value: Any) -> bytes:
    """The default encoder: compact JSON, UTF-8."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def json_decode(body: bytes) -> Any:
    """The default decoder."""
    return json.loads(body)


class _Plan:
    """How one decorated function finds its key and fingerprint."""

    def __init__(
        self,
        fn: Callable[..., Any],
        key: Union[str, Callable[..., Any]],
        fingerprint: Optional[Callable[..., Parts]],
    ) -> None:
        self.signature = inspect.signature(fn)
        self.name = f"{fn.__module__}.{fn.__qualname__}"
        if isinstance(key, str) and key not in self.signature.parameters:
            raise TypeError(f"{self.name} has no parameter {key!r} to take the key from")
        self.key, self.fingerprint = key, fingerprint

    def of(self, args: Tuple[Any, ...], kwargs: dict[str, Any]) -> Tuple[Any, Fingerprint]:
        if callable(self.key):
            key = self.key(*args, **kwargs)
        else:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = bound.arguments.get(self.key)
        if key is None:
            return None, Fingerprint.of()
        if not isinstance(key, (str, bytes)):
            raise TypeError(f"the idempotency key must be str or bytes, got {type(key).__name__}")
        if self.fingerprint is not None:
            return key, Fingerprint.of(self.name, *self.fingerprint(*args, **kwargs))
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        rest = {n: v for n, v in bound.arguments.items() if n != self.key}
        try:
            canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"{self.name}: its arguments are not JSON ({e}); pass fingerprint= to say "
                "what identifies a request"
            ) from None
        return key, Fingerprint.of(self.name, canonical)


def _replayed(got: Replay, decode: Callable[[bytes], Any]) -> Any:
    if got.failed:
        raise IdempotencyFailed(
            f"the request failed for good (status {got.response.status})", response=got.response
        )
    return decode(got.response.body)


def _refused(got: Any, waited: float) -> Exception:
    if isinstance(got, Mismatch):
        return IdempotencyMismatch(
            "this idempotency key was used for a request with other arguments"
        )
    assert isinstance(got, InProgress)
    return IdempotencyInProgress(
        f"another call with this idempotency key is running (waited {waited:.3f} s)",
        retry_after=got.retry_after,
    )


def _pauses(wait: float) -> List[float]:
    """The pauses between asks while a duplicate waits, within ``wait`` seconds."""
    pauses, pause, total = [], FIRST_PAUSE, 0.0
    while total < wait:
        step = min(pause, wait - total)
        if step < 1e-6:
            break
        pauses.append(step)
        total += step
        pause = min(pause * 2, MAX_PAUSE)
    return pauses


def idempotent(
    store: Any,
    *,
    scope: str,
    key: Union[str, Callable[..., Any]] = "idempotency_key",
    fingerprint: Optional[Callable[..., Parts]] = None,
    encode: Callable[[Any], bytes] = json_encode,
    decode: Callable[[bytes], Any] = json_decode,
    wait: float = 0.0,
    watch: bool = True,
) -> Callable[[F], F]:
    """Makes a function run once per idempotency key (see this module's doc). ``store`` is an
    ``Idempotency`` for plain functions, an ``AsyncIdempotency`` for coroutine functions."""
    from ._idempotency import AsyncIdempotency, Claim, AsyncClaim, Idempotency

    if wait < 0:
        raise ValueError("wait must not be negative")

    def decorate(fn: F) -> F:
        plan = _Plan(fn, key, fingerprint)
        if inspect.iscoroutinefunction(fn):
            if not isinstance(store, AsyncIdempotency):
                raise TypeError("a coroutine function needs an AsyncIdempotency store")

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                k, fp = plan.of(args, kwargs)
                if k is None:
                    return await fn(*args, **kwargs)
                started = time.monotonic()
                for pause in [0.0] + _pauses(wait):
                    await asyncio.sleep(pause)
                    got = await store.begin(scope, k, fp)
                    if isinstance(got, AsyncClaim):
                        return await _run_async(got, fn, args, kwargs, encode, watch)
                    if isinstance(got, Replay):
                        return _replayed(got, decode)
                    if isinstance(got, Mismatch):
                        break
                raise _refused(got, time.monotonic() - started)

            return run_async  # type: ignore[return-value]

        if not isinstance(store, Idempotency):
            raise TypeError("a plain function needs an Idempotency store")

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            k, fp = plan.of(args, kwargs)
            if k is None:
                return fn(*args, **kwargs)
            started = time.monotonic()
            for pause in [0.0] + _pauses(wait):
                time.sleep(pause)
                got = store.begin(scope, k, fp)
                if isinstance(got, Claim):
                    return _run(got, fn, args, kwargs, encode, watch)
                if isinstance(got, Replay):
                    return _replayed(got, decode)
                if isinstance(got, Mismatch):
                    break
            raise _refused(got, time.monotonic() - started)

        return run  # type: ignore[return-value]

    return decorate


def _run(
    claim: Any,
    fn: Callable[..., Any],
    args: Tuple[Any, ...],
    kwargs: dict[str, Any],
    encode: Callable[[Any], bytes],
    watch: bool,
) -> Any:
    watched = claim.watch() if watch else None
    try:
        value = fn(*args, **kwargs)
        body = encode(value)
    except BaseException:
        if watched is not None:
            watched.stop()
        claim.fail()
        raise
    if watched is not None:
        watched.stop()
    claim.complete(Response(200, body))
    return value


async def _run_async(
    claim: Any,
    fn: Callable[..., Any],
    args: Tuple[Any, ...],
    kwargs: dict[str, Any],
    encode: Callable[[Any], bytes],
    watch: bool,
) -> Any:
    watched = claim.watch() if watch else None
    try:
        value = await fn(*args, **kwargs)
        body = encode(value)
    except BaseException:
        if watched is not None:
            await watched.stop()
        await claim.fail()
        raise
    if watched is not None:
        await watched.stop()
    await claim.complete(Response(200, body))
    return value
