"""What tools/peer-bench.py needs besides its clients: processes it stops whatever happens, the
private redis-server, a minimal RESP command, and the peers' on-demand installs.

Why a module of its own: the driver stays about the workload and the report; everything here is
plumbing that must be right once (every process started is stopped by its process group, every
wait is bounded, every failure is one line with its exit code).
"""

import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PEERS = Path(__file__).resolve().parent


class Fail(Exception):
    """A one-line error and the exit code it maps to."""

    def __init__(self, msg, code=2):
        super().__init__(msg)
        self.code = code


def progress(msg):
    print(f"peer-bench: {msg}", file=sys.stderr, flush=True)


class Procs:
    """Every process started, each in its own session, stopped by pid (group) on the way out."""

    def __init__(self):
        self.live = []

    def start(self, cmd, **kw):
        p = subprocess.Popen(cmd, start_new_session=True, **kw)
        self.live.append(p)
        return p

    def run(self, cmd, timeout, what, cwd=None):
        """Runs `cmd` to completion within `timeout` s; its stdout. Fails (1) on a non-zero exit."""
        p = self.start(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(p)
            raise Fail(f"{what}: no result within {timeout:.0f} s (stopped)", 1) from None
        # Done; on any other way out (Ctrl-C) it stays listed, for stop_all.
        self.forget(p)
        if p.returncode != 0:
            last = (err.strip().splitlines() or [f"exit {p.returncode}"])[-1]
            raise Fail(f"{what}: {last}", 1)
        return out

    def forget(self, p):
        if p in self.live:
            self.live.remove(p)

    def stop(self, p):
        if p.poll() is None:
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(p.pid, sig)
                    p.wait(timeout=wait)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    continue
        self.forget(p)

    def stop_all(self):
        for p in list(self.live):
            self.stop(p)


def resp(port, *args, timeout=10.0):
    """One command over a fresh connection (RESP2): its reply, decoded enough for this tool."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        parts = [f"*{len(args)}\r\n".encode()]
        for a in args:
            b = str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
        s.sendall(b"".join(parts))
        f = s.makefile("rb")
        line = f.readline().rstrip(b"\r\n")
        if not line:
            raise ConnectionError("connection closed")
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise Fail(f"redis-server: {rest.decode()}")
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else f.read(n + 2)[:-2].decode()
        return rest.decode()


class Server:
    """The private redis-server: 127.0.0.1 on a free port, no persistence, pinned if asked;
    `extra` arguments after those (`--loadmodule PATH`)."""

    def __init__(self, procs, tmp, pin, extra=()):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = pin + ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                     "--save", "", "--appendonly", "no", "--dir", str(tmp)] + list(extra)
        self.procs = procs
        self.proc = procs.start(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if resp(self.port, "PING", timeout=1) == "PONG":
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise Fail(f"redis-server did not start on 127.0.0.1:{self.port}")

    def stop(self):
        try:
            resp(self.port, "SHUTDOWN", "NOSAVE", timeout=2)
        except (OSError, Fail):
            pass  # the reply is a closed connection
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.procs.stop(self.proc)


def digest(*paths):
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def install(procs, what, cmd, cwd=None):
    try:
        procs.run(cmd, 900, what, cwd=cwd)
    except Fail as e:
        raise Fail(f"{e} (no network?)", 2) from None


def prepare_node(procs, cache):
    """`npm ci` into cache/node when the lock file changed; returns the directory to run in."""
    for tool in ("node", "npm"):
        if not shutil.which(tool):
            raise Fail(f"{tool} not found (Node >= 20 with npm), or leave out the rlflx* clients")
    d = cache / "node"
    d.mkdir(parents=True, exist_ok=True)
    src = PEERS / "node"
    want = digest(src / "package.json", src / "package-lock.json")
    stamp = d / ".installed"
    if not (d / "node_modules").is_dir() or not stamp.exists() or stamp.read_text() != want:
        progress(f"installing the Node peer into {d} (npm ci)")
        for f in ("package.json", "package-lock.json"):
            shutil.copy2(src / f, d / f)
        install(procs, "npm ci", ["npm", "ci", "--no-audit", "--no-fund"], cwd=d)
        stamp.write_text(want)
    shutil.copy2(src / "bench.mjs", d / "bench.mjs")
    return d


def prepare_python(procs, cache):
    """A venv under cache/python with the pinned requirements; returns its python."""
    d = cache / "python"
    py = d / "venv/bin/python"
    req = PEERS / "python/requirements.txt"
    want = digest(req) + sys.version
    stamp = d / ".installed"
    if not py.exists() or not stamp.exists() or stamp.read_text() != want:
        progress(f"installing the Python peer into {d}/venv (pip)")
        shutil.rmtree(d / "venv", ignore_errors=True)
        d.mkdir(parents=True, exist_ok=True)
        try:
            procs.run([sys.executable, "-m", "venv", str(d / "venv")], 300, "python3 -m venv")
        except Fail as e:
            raise Fail(f"{e} (Debian: apt install python3-venv)", 2) from None
        install(procs, "pip install", [str(py), "-m", "pip", "install", "-q", "-r", str(req)])
        stamp.write_text(want)
    return py


def prepare_redis_atomic(procs, py):
    """The redis_atomic package (bindings/python) into the Python peer's venv, the way a user
    installs it: `pip install ./bindings/python` (maturin through PEP 517, a release build in the
    workspace's target dir; cargo rebuilds only what changed)."""
    progress("building and installing redis_atomic (bindings/python) into the Python peer venv")
    install(procs, "pip install ./bindings/python",
            [str(py), "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps",
             str(PEERS.parent.parent / "bindings/python")])
