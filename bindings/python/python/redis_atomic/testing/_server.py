"""One private server process, started the way the Rust testkit starts one: the binary from
``REDIS_ATOMIC_SERVER_BIN`` or ``redis-server`` on ``PATH``, a fresh temp dir with a config file,
a free port on 127.0.0.1 (or a unix socket, or TLS only), ready once it answers ``PING``, killed
at teardown."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterator, List, Optional, Sequence, Union

if TYPE_CHECKING:
    from ._tls import TlsMaterial

__all__ = ["RedisServer", "server_binary", "free_port", "Reply"]

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


def free_port() -> int:
    """A free port on 127.0.0.1 whose cluster bus port (+10000) is free too."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
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
    """One private server process: temp dir, free port, no persistence.

    ``extra``: more ``directive value`` config lines. ``tls``: serve TLS only (``port 0``, the
    material's certificates; ``client_auth`` says whether clients need a certificate).
    ``unix_socket``: listen on a socket in the temp dir instead of TCP. ``sentinel``: run as a
    Sentinel (``--sentinel``)."""

    def __init__(
        self,
        binary: Optional[str] = None,
        *,
        extra: Sequence[str] = (),
        tls: Optional[TlsMaterial] = None,
        client_auth: bool = False,
        unix_socket: bool = False,
        sentinel: bool = False,
    ) -> None:
        self.binary = binary or server_binary()
        self.dir = Path(tempfile.mkdtemp(prefix="redis-atomic-py-"))
        self.tls, self.sentinel = tls, sentinel
        self.socket = self.dir / "redis.sock" if unix_socket else None
        self.port = 0 if unix_socket else free_port()
        lines = [
            f"dir {self.dir}",
            "logfile redis.log",
            'save ""',
            "appendonly no",
            "protected-mode no",
            "daemonize no",
        ]
        if self.socket is not None:
            lines += ["port 0", f"unixsocket {self.socket}", "unixsocketperm 700"]
        elif tls is not None:
            lines += ["port 0", "bind 127.0.0.1"] + tls.directives(self.port, client_auth)
        else:
            lines += [f"port {self.port}", "bind 127.0.0.1"]
        if sentinel:
            lines = [line for line in lines if not line.startswith(("save", "appendonly"))]
        config = self.dir / "redis.conf"
        config.write_text("\n".join(lines + list(extra)) + "\n")
        argv = [self.binary, str(config)] + (["--sentinel"] if sentinel else [])
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>`` (``rediss://`` with TLS, ``redis+unix://`` on a
        socket)."""
        if self.socket is not None:
            return f"redis+unix://{self.socket}"
        scheme = "rediss" if self.tls is not None else "redis"
        return f"{scheme}://127.0.0.1:{self.port}"

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

    def _connect(self, timeout: float) -> socket.socket:
        if self.socket is not None:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(timeout)
            s.connect(str(self.socket))
            return s
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        if self.tls is None:
            return s
        context = ssl.create_default_context(cafile=str(self.tls.ca_file))
        context.load_cert_chain(str(self.tls.client_cert_file), str(self.tls.client_key_file))
        return context.wrap_socket(s, server_hostname="127.0.0.1")

    def command(self, *args: Union[str, int, bytes], timeout: float = 10.0) -> Reply:
        """One command over a fresh connection (RESP2): its reply."""
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
        with self._connect(timeout) as s:
            s.sendall(b"".join(parts))
            with s.makefile("rb") as f:
                return _read_reply(f)

    def info(self, section: str) -> dict[str, str]:
        """``INFO section`` as a dict."""
        raw = self.command("INFO", section)
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        pairs = (line.split(":", 1) for line in text.splitlines() if ":" in line)
        return {k: v for k, v in pairs}

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


def stop_all(servers: List[RedisServer]) -> None:
    """Stops every server of a group (each by its own process)."""
    for s in servers:
        s.stop()
