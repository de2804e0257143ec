"""The clients: ``Client`` (blocking) and ``AsyncClient`` (asyncio), and ``connect``.

Both wrap one native client (``redis_atomic._native.Client``) connected on the process's tokio
runtime; a blocking call waits with the GIL released, an async call returns an awaitable that
asyncio resolves when the library's future completes. Every ``ClientConfig`` setting of the
library is a keyword argument here (see ``connect``).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, ClassVar, Generic, Optional, Sequence, Type, TypeVar, Union, cast

from . import _native
from ._native import BatchStats, Batching, Client as _NativeClient
from ._native import Replicas, RetryPolicy, Script, ScriptReply, TlsOptions
from ._types import Delivery, Seconds

__all__ = ["Client", "AsyncClient", "connect", "native_client", "OnClient"]

Target = Union[str, Sequence[str]]


def _target(url: Target) -> Any:
    return url if isinstance(url, str) else list(url)


class _ClientView:
    """What both faces of the client share: the native client and what it says of itself."""

    __slots__ = ("_native",)

    _native: _NativeClient

    @property
    def is_cluster(self) -> bool:
        """Whether this client talks to a Redis Cluster."""
        return self._native.is_cluster

    @property
    def timeout(self) -> float:
        """The per-request timeout, in seconds."""
        return self._native.timeout

    @property
    def closed(self) -> bool:
        """Whether ``close()`` ran."""
        return self._native.closed

    def batch_stats(self) -> BatchStats:
        """What batching did so far: decisions of batchable scripts, and how they left (alone,
        in batch calls, or as separate calls). ``ClientError`` once closed."""
        return self._native.batch_stats()

    def __repr__(self) -> str:
        return repr(self._native)


class Client(_ClientView):
    """A blocking client. Create it with ``Client.connect`` (or ``redis_atomic.connect``), in
    the process that uses it (after any ``os.fork()``). Thread-safe: share one per process.
    ``close()`` (or leaving ``with client:``) ends it."""

    __slots__ = ()

    def __init__(self, native: _native.Client) -> None:
        if native.is_async:
            raise TypeError("an async native client: use AsyncClient")
        self._native = native

    @classmethod
    def connect(
        cls,
        url: Target,
        *,
        timeout: Seconds | None = None,
        retry: RetryPolicy | None = None,
        contention: RetryPolicy | None = None,
        delivery: Delivery | None = None,
        pool_size: int | None = None,
        replicas: Replicas | None = None,
        tls: TlsOptions | None = None,
        force_lua: bool | None = None,
        batching: Batching | bool | None = None,
    ) -> Client:
        """Connects to ``url`` (``redis://``, ``rediss://``, ``redis+unix://``,
        ``redis+sentinel://``), or to a Redis Cluster through a list of seed URLs.

        ``timeout``: deadline of one request (default 1 s), past which its outcome is unknown.
        ``retry``: retries of failed calls that may be retried (default 4 attempts within 3 s).
        ``contention``: retries under contention (default ``RetryPolicy.contention()``).
        ``delivery``: ``"eval"`` (``EVALSHA``, the default; ``"evalsha"`` is accepted too) or
        ``"functions"`` (``FCALL``).
        ``pool_size``: connections in the pool (default 4, at most 1024).
        ``replicas``: every write waits for ``Replicas(count, timeout)`` (``WAIT``).
        ``tls``: CA and client certificate for ``rediss://`` (default: system trust store).
        ``force_lua``: never use native commands where the server has them.
        ``batching``: decisions queued for one node leave together (default on; ``False`` or
        ``Batching.off()`` sends each alone; a ``Batching`` tunes it).
        """
        native = _native.Client.connect(
            _target(url), False, timeout=timeout, retry=retry, contention=contention,
            delivery=delivery, pool_size=pool_size, replicas=replicas, tls=tls,
            force_lua=force_lua, batching=batching,
        )
        return cls(cast(_native.Client, native))

    def call(
        self,
        script: Script,
        keys: Sequence[str | bytes] = (),
        args: Sequence[str | bytes | int] = (),
    ) -> ScriptReply:
        """Runs one of your scripts (from a ``ScriptSet``): its reply."""
        return cast(ScriptReply, self._native.call(script, keys, args))

    def close(self) -> None:
        """Ends the client: every later call of it, of a primitive made from it or of a handle
        they granted raises ``ClientError``. A second close does nothing."""
        self._native.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


class AsyncClient(_ClientView):
    """An asyncio client. Create it with ``await AsyncClient.connect(...)``, in the process
    that uses it. Its calls may be awaited from any event loop of that process. ``await
    close()`` (or leaving ``async with client:``) ends it."""

    __slots__ = ()

    def __init__(self, native: _native.Client) -> None:
        if not native.is_async:
            raise TypeError("a blocking native client: use Client")
        self._native = native

    @classmethod
    async def connect(
        cls,
        url: Target,
        *,
        timeout: Seconds | None = None,
        retry: RetryPolicy | None = None,
        contention: RetryPolicy | None = None,
        delivery: Delivery | None = None,
        pool_size: int | None = None,
        replicas: Replicas | None = None,
        tls: TlsOptions | None = None,
        force_lua: bool | None = None,
        batching: Batching | bool | None = None,
    ) -> AsyncClient:
        """Connects like ``Client.connect`` (same settings), without blocking the loop."""
        native = await _native.Client.connect(
            _target(url), True, timeout=timeout, retry=retry, contention=contention,
            delivery=delivery, pool_size=pool_size, replicas=replicas, tls=tls,
            force_lua=force_lua, batching=batching,
        )
        return cls(cast(_native.Client, native))

    async def call(
        self,
        script: Script,
        keys: Sequence[str | bytes] = (),
        args: Sequence[str | bytes | int] = (),
    ) -> ScriptReply:
        """Runs one of your scripts (from a ``ScriptSet``): its reply."""
        return cast(ScriptReply, await self._native.call(script, keys, args))

    async def close(self) -> None:
        """Ends the client, as ``Client.close`` (nothing to wait for: a coroutine so that it
        reads as asyncio code does)."""
        self._native.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()


connect = Client.connect
"""``Client.connect``: a blocking client."""


def native_client(client: _ClientView, face: Type[_ClientView]) -> _native.Client:
    """The native client of ``client``, which must be a ``face`` (``Client`` for the blocking
    primitives, ``AsyncClient`` for the asyncio ones): a ``TypeError`` otherwise."""
    if not isinstance(client, face):
        raise TypeError(f"expected a redis_atomic.{face.__name__}, got {type(client).__name__}")
    return client._native


C = TypeVar("C", bound=_ClientView)


class OnClient(Generic[C]):
    """A primitive over one face of the client: ``OnClient[Client]`` for the blocking ones,
    ``OnClient[AsyncClient]`` for the asyncio ones. Each primitive's constructor is written
    once, in a view both faces derive from; the face's ``_face`` says which client it takes (a
    ``TypeError`` for the other), and the type parameter says the same to type checkers."""

    __slots__ = ()

    _face: ClassVar[Type[_ClientView]]

    def _native_client(self, client: C) -> _native.Client:
        return native_client(client, self._face)
