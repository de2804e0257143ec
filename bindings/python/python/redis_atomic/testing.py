"""A pytest plugin: a real, private redis-server for your tests, started the way the Rust testkit
starts one.

Registered through the ``pytest11`` entry point, so installing the package is enough::

    def test_checkout(redis_url: str) -> None:
        client = redis_atomic.connect(redis_url)
        ...

Fixtures:

* ``redis_server`` (session): a ``RedisServer`` — the binary from ``REDIS_ATOMIC_SERVER_BIN`` or
  ``redis-server`` on ``PATH`` (a Valkey ``valkey-server`` works the same), a fresh temp dir, a
  free port on 127.0.0.1, ready once it answers ``PING``, killed at teardown.
* ``redis_url`` (function): the server's URL, after ``FLUSHALL`` (each test starts empty).

A missing binary fails the test with what to install: a skipped test would prove nothing.
``RedisServer`` can also be used directly (``with RedisServer() as server: ...``), and can
stall the server (``server.stalled()``: SIGSTOP until the block ends) to test timeouts.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import BinaryIO, Iterator, Optional, Union

import pytest

__all__ = ["RedisServer", "server_binary", "redis_server", "redis_url"]

ENV_BIN = "REDIS_ATOMIC_SERVER_BIN"
READY_TIMEOUT = 30.0

Reply = Union[str, int, bytes, None, list]  # type: ignore[type-arg]


def server_binary() -> str:
    """The server to run: ``$REDIS_ATOMIC_SERVER_BIN``, else ``redis-server`` on ``PATH``."""
    explicit = os.environ.get(ENV_BIN)
    if explicit:
        return explicit
    found = shutil.which("redis-server")
    if not found:
        raise RuntimeError(
            "redis-server not found: install it (Debian: apt-get install redis-server) or set "
            f"{ENV_BIN} to a redis-server or valkey-server binary"
        )
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _read_reply(f: BinaryIO) -> Reply:
    line = f.readline()
    if not line:
        raise ConnectionError("connection closed")
    kind, rest = line[:1], line[1:].rstrip(b"\r\n")
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data: bytes = f.read(n + 2)[:-2]
        return data
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise RuntimeError(f"unexpected reply {line!r}")


class RedisServer:
    """One private server process: temp dir, free port, no persistence."""

    def __init__(self, binary: Optional[str] = None) -> None:
        self.binary = binary or server_binary()
        self.dir = Path(tempfile.mkdtemp(prefix="redis-atomic-py-"))
        self.port = _free_port()
        config = self.dir / "redis.conf"
        config.write_text(
            "\n".join(
                [
                    f"port {self.port}",
                    "bind 127.0.0.1",
                    f"dir {self.dir}",
                    "logfile redis.log",
                    'save ""',
                    "appendonly no",
                    "protected-mode no",
                    "daemonize no",
                ]
            )
            + "\n"
        )
        self.proc = subprocess.Popen(
            [self.binary, str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>``."""
        return f"redis://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if self.command("PING", timeout=1.0) == "PONG":
                    return
            except (OSError, RuntimeError):
                pass
            time.sleep(0.02)  # polling the condition "answers PING", bounded by the deadline
        raise RuntimeError(f"{self.binary} did not answer PING on {self.url}:\n{self.log()}")

    def command(self, *args: Union[str, int, bytes], timeout: float = 10.0) -> Reply:
        """One command over a fresh connection (RESP2): its reply."""
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(b"".join(parts))
            with s.makefile("rb") as f:
                return _read_reply(f)

    def flushall(self) -> None:
        self.command("FLUSHALL")

    @contextlib.contextmanager
    def stalled(self) -> Iterator[None]:
        """The server stopped (SIGSTOP) for the block: requests reach its socket and get no
        answer until it ends (SIGCONT)."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(self.proc.pid, signal.SIGCONT)

    def log(self) -> str:
        try:
            return (self.dir / "redis.log").read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Kills the server (SIGKILL; it holds nothing worth saving) and removes its dir."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGCONT)
                self.proc.kill()
            self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private redis-server (or valkey-server) for the whole session."""
    try:
        server = RedisServer()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, emptied (``FLUSHALL``) for this test."""
    redis_server.flushall()
    return redis_server.url
