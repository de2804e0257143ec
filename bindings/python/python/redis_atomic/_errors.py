"""The exceptions of redis_atomic: one hierarchy, classified by what a retry would do.

Every class has a stable ``code`` (the Rust library's ``Error::code()``: ``not_sent``,
``outcome_unknown``, ...; the package's own errors have theirs: ``handle_ended``, ...), and
every instance carries the facts the library set on the error, never worked out here:

* ``nothing_ran``: True when the request surely did not run (a resend cannot repeat an effect).
* ``transient``: True when a prompt retry may succeed (not sent, a refusal that clears by
  itself such as ``BUSY``, a connect refused, reset or timed out).
* ``timed_out``: True when the client gave up waiting in any attempt.
* ``retry_safe``: True when resending this same call cannot repeat its effect (nothing ran, or
  the call is retry-safe: a request id, the caller's own token, an idempotent write).

A refusal by a primitive (rate limited, quota exhausted, lock held) is never an exception: it
is a value (``Limited``, ``Refused``, ``Held``).

The native module raises these; they are plain Python classes so they pickle, subclass and
type-check like any other exception.
"""

from __future__ import annotations

import builtins
from typing import Any, ClassVar, List, Optional

__all__ = [
    "RedisAtomicError",
    "NotSent",
    "Rejected",
    "OutcomeUnknown",
    "WrongType",
    "BadArgument",
    "CostExceedsBurst",
    "BadReply",
    "CrossSlot",
    "ServerError",
    "ConnectionError",
    "TlsError",
    "ClientError",
    "NotReplicated",
    "UsedAfterFork",
    "ScriptFolderError",
    "HandleEnded",
    "LeaseEnded",
    "IdempotencyInProgress",
    "IdempotencyMismatch",
    "IdempotencyFailed",
]


class RedisAtomicError(Exception):
    """Base class of every error this package raises."""

    code: ClassVar[str] = "redis_atomic"
    # The facts every error carries (set per instance from the library's error).
    nothing_ran: bool = False
    transient: bool = False
    timed_out: bool = False
    retry_safe: bool = False

    def __init__(
        self,
        message: str,
        *,
        nothing_ran: bool = False,
        transient: bool = False,
        timed_out: bool = False,
        retry_safe: Optional[bool] = None,
        code: Optional[str] = None,
    ):
        super().__init__(message)
        self.message = message
        self.nothing_ran = nothing_ran
        self.transient = transient
        self.timed_out = timed_out
        self.retry_safe = nothing_ran if retry_safe is None else retry_safe
        if code is not None and code != type(self).code:
            # An error kind this package version does not know by name (newer library).
            self.code = code  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class NotSent(RedisAtomicError):
    """The request never reached a server (connection refused): nothing ran; safe to retry."""

    code = "not_sent"


class Rejected(RedisAtomicError):
    """A server refused the request before running it (``BUSY``, ``READONLY``, ``OOM``, ...):
    nothing ran. ``server_code`` is the server's error code."""

    code = "rejected"

    def __init__(self, message: str, *, server_code: str = "", **kw: Any):
        super().__init__(message, **kw)
        self.server_code = server_code


class OutcomeUnknown(RedisAtomicError):
    """The request may or may not have run (timeout, connection lost after sending).

    ``retry_safe``: whether resending this same call (same arguments, same request id or token)
    cannot repeat its effect. ``attempts``: attempts made. ``timed_out``: the client gave up
    waiting (the ``timeout`` setting) in any attempt, rather than only the connection failing.
    """

    code = "outcome_unknown"

    def __init__(self, message: str, *, reason: str = "", attempts: int = 1, **kw: Any):
        super().__init__(message, **kw)
        self.reason = reason
        self.attempts = attempts


class WrongType(RedisAtomicError):
    """A key holds a value of another type (or another primitive's data); nothing changed."""

    code = "wrong_type"


class BadArgument(RedisAtomicError, ValueError):
    """An argument was refused, by this package before sending or by the script."""

    code = "bad_argument"


class CostExceedsBurst(RedisAtomicError, ValueError):
    """A request costs more than its limits could ever admit at once: not a wait but a refusal
    for good. Nothing was sent. (Its own class, as in the library: not a ``BadArgument``.)"""

    code = "cost_exceeds_burst"

    def __init__(self, message: str, *, cost: int = 0, burst: int = 0, **kw: Any):
        super().__init__(message, **kw)
        self.cost = cost
        self.burst = burst


class BadReply(RedisAtomicError):
    """A script replied in a shape its binding does not understand (version skew?)."""

    code = "bad_reply"

    def __init__(self, message: str, *, script: str = "", detail: str = "", **kw: Any):
        super().__init__(message, **kw)
        self.script = script
        self.detail = detail


class CrossSlot(RedisAtomicError):
    """The keys of one call span hash slots; nothing was sent (or the server refused it).
    ``slots``: the slot of each key, in order (empty when the server refused)."""

    code = "cross_slot"

    def __init__(self, message: str, *, slots: Optional[List[int]] = None, **kw: Any):
        super().__init__(message, **kw)
        self.slots: List[int] = list(slots or [])


class ServerError(RedisAtomicError):
    """Any other server error (script runtime error, ACL ``NOPERM``, ...); ``server_code`` is
    the server's error code."""

    code = "server_error"

    def __init__(self, message: str, *, server_code: str = "", **kw: Any):
        super().__init__(message, **kw)
        self.server_code = server_code


class ConnectionError(RedisAtomicError, builtins.ConnectionError):
    """Could not connect or configure a connection: nothing ran. ``transient`` when the
    network refused, reset or timed out the connect (a server restarting)."""

    code = "connection"


class TlsError(RedisAtomicError):
    """TLS could not be set up (a CA, certificate or key unreadable, a failed handshake).
    Nothing was sent; a retry cannot help."""

    code = "tls"


class ClientError(RedisAtomicError):
    """The client failed on its own side (a reply it could not parse, a misconfiguration)."""

    code = "client"


class NotReplicated(RedisAtomicError):
    """The write ran and stands on the primary, but fewer replicas than asked acknowledged it
    in time (the ``replicas`` setting): a failover now may lose it."""

    code = "not_replicated"

    def __init__(self, message: str, *, acked: int = 0, wanted: int = 0, **kw: Any):
        super().__init__(message, **kw)
        self.acked = acked
        self.wanted = wanted


class UsedAfterFork(RedisAtomicError):
    """A client created before ``os.fork()`` was used in the child. Its connections are the
    parent's sockets: create clients after forking. Nothing was sent."""

    code = "used_after_fork"

    def __init__(self, message: str, **kw: Any):
        kw.setdefault("nothing_ran", True)
        super().__init__(message, **kw)


class ScriptFolderError(RedisAtomicError):
    """A folder of scripts could not be loaded (unreadable, a header that does not match its
    body, no ``library.version``, ...)."""

    code = "script_folder"

    def __init__(self, message: str, **kw: Any):
        kw.setdefault("nothing_ran", True)
        super().__init__(message, **kw)


class HandleEnded(ClientError, RuntimeError):
    """A lease handle was used after its end verb ran (a second ``release``, ``ack``,
    ``complete``, ...), or while a watchdog holds its lease: a client error, nothing was sent.
    After an end whose outcome is unknown, repeat it by parts with the handle's ``token`` and
    ``fence``."""

    code = "handle_ended"

    def __init__(self, message: str, **kw: Any):
        kw.setdefault("nothing_ran", True)
        super().__init__(message, **kw)


LeaseEnded = HandleEnded
"""Deprecated: the former name of ``HandleEnded`` (the same class)."""


class IdempotencyInProgress(RedisAtomicError):
    """Raised by an ``idempotent`` function when another call with the same key is running
    (and ``wait`` ran out): the function did not run here. ``retry_after``: seconds left on the
    other call's claim."""

    code = "idempotency_in_progress"

    def __init__(self, message: str, *, retry_after: float = 0.0, **kw: Any):
        kw.setdefault("nothing_ran", True)
        super().__init__(message, **kw)
        self.retry_after = retry_after


class IdempotencyMismatch(RedisAtomicError, ValueError):
    """Raised by an ``idempotent`` function when its key was used for a call with other
    arguments (another fingerprint): the function did not run."""

    code = "idempotency_mismatch"

    def __init__(self, message: str, **kw: Any):
        kw.setdefault("nothing_ran", True)
        super().__init__(message, **kw)


class IdempotencyFailed(RedisAtomicError):
    """Raised by an ``idempotent`` function when its key holds a final failure (stored with
    ``fail(response)``): ``response`` is that stored ``Response``."""

    code = "idempotency_failed"

    def __init__(self, message: str, *, response: Any = None, **kw: Any):
        kw.setdefault("nothing_ran", True)
        super().__init__(message, **kw)
        self.response = response
