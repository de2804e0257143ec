"""`serve`'s driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"):
`python tools/drivers/http_face.py --bin PATH/TO/redis-atomic` starts `redis-atomic serve` on a
loopback port against the server the harness names, and drives it over HTTP (stdlib urllib)
through the rows `lock`, `quota`, `ratelimit-sl` and `ratelimit-win`, as docs/http.md tells a
client: a 504 or 502 `bad-reply` whose `retry_safe` is true (a lock acquire with the caller's
token, a quota add with a request id) is resent with the same body, at most twice; nothing else.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Optional

sys.dont_write_bytecode = True  # no __pycache__ beside the drivers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from protocol import Message, serve  # noqa: E402

ROWS = ["lock", "quota", "ratelimit-sl", "ratelimit-win"]
RESENDS = 2
# Problem kinds (docs/http.md, "Errors") → the vocabulary's codes; `internal` has none on purpose:
# a 500 is a defect of serve, which the row must report, not absorb.
KINDS = {
    "unavailable": "rejected",
    "not-replicated": "not_replicated",
    "outcome-unknown": "outcome_unknown",
    "bad-reply": "bad_reply",
    "redis-error": "server_error",
}


class Problem(Exception):
    def __init__(self, kind: str, retry_safe: bool) -> None:
        super().__init__(kind)
        self.kind, self.retry_safe = kind, retry_safe


def code(e: BaseException) -> Optional[str]:
    if isinstance(e, Problem):
        return KINDS.get(e.kind, f"{e.kind} (not a code: a defect of serve)")
    return None


def die_with_parent() -> None:
    """In the child: SIGTERM when this driver dies, even by SIGKILL (the harness kills drivers
    it is done with), so no serve outlives it (Linux: PR_SET_PDEATHSIG)."""
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def start_face(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Starts a face (`serve`, `rls`) and reads the address it prints once ready. A face that
    cannot reach Redis exits: under a fault (a crash, a restart) that is the fault, so it is
    started again, at most 20 times in 10 s."""
    for _ in range(20):
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if line.startswith("http://"):
            return proc, line
        proc.wait()
        time.sleep(0.5)
    raise RuntimeError(f"{args[1]} did not start: {line!r}")


class Serve:
    """One `redis-atomic serve` on a loopback port, stopped with the driver."""

    def __init__(self, binary: str, url: str, namespace: str) -> None:
        conf = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
        conf.write(
            f'[serve]\nnamespace = "{namespace}"\n'
            '[limits.sl]\nlimits = [ { algorithm = "sliding-log", limit = 10, period_ms = 1000 } ]\n'
            '[limits.win]\nlimits = [ { algorithm = "fixed-window", limit = 10, period_ms = 1000 } ]\n'
        )
        conf.close()
        args = [binary, "serve", "--url", url, "--listen", "127.0.0.1:0", "--config", conf.name]
        try:
            self.proc, self.base = start_face(args)
        finally:
            os.unlink(conf.name)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()

    def post(self, path: str, body: Message) -> tuple[int, Message]:
        req = urllib.request.Request(
            self.base + path, json.dumps(body).encode(), {"content-type": "application/json"}
        )
        return self.send(req)

    def get(self, path: str) -> tuple[int, Message]:
        return self.send(urllib.request.Request(self.base + path))

    @staticmethod
    def send(req: urllib.request.Request) -> tuple[int, Message]:
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            body: Message = json.loads(e.read() or b"{}")
            if e.code in (409, 429):
                return e.code, body
            kind = str(body.get("type", "")).rsplit(":", 1)[-1] or f"status {e.code}"
            raise Problem(kind, bool(body.get("retry_safe"))) from None


class Http:
    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.serve: Optional[Serve] = None
        self.row = ""

    def hello(self, msg: Message) -> Message:
        if msg.get("cluster"):
            return {"driver": "serve (HTTP)", "rows": [], "unsupported": "standalone only"}
        if self.serve is not None:
            self.serve.stop()
        self.serve = Serve(self.binary, msg["url"], msg["namespace"])
        self.row = msg["row"]
        return {"driver": "serve (HTTP)", "rows": ROWS}

    def post(self, path: str, body: Message) -> tuple[int, Message]:
        """POST, resent with the same body when serve says it is retry-safe. A resend that fails
        settles nothing (a refused resend says nothing about the first, which may have run)."""
        assert self.serve is not None
        try:
            return self.serve.post(path, body)
        except Problem as first:
            if not first.retry_safe:
                raise
            for _ in range(RESENDS):
                try:
                    return self.serve.post(path, body)
                except Problem:
                    pass
            raise

    def run(self, op: str, a: Message) -> Message:
        assert self.serve is not None
        if op == "lock.acquire":
            body = {"ttl_ms": a["ttl_ms"], "token": a["token"]}
            status, got = self.post(f"/v1/locks/{a['resource']}/acquire", body)
            if status == 409:
                return {"outcome": "held"}
            return {"outcome": "acquired", "fence": got["fence"], "handle": got["fence"]}
        if op == "lock.release":
            body = {"token": a["token"], "fence": a["handle"]}
            _, got = self.post(f"/v1/locks/{a['resource']}/release", body)
            return {"outcome": "released" if got.get("released") else "lost"}
        if op == "quota.add":
            keys = ("delta", "min", "max", "ttl_ms", "request_id")
            _, got = self.post(f"/v1/quotas/{a['name']}/add", {k: a[k] for k in keys})
            return {"outcome": "applied" if got["applied"] else "refused", "value": got["value"]}
        if op == "quota.get":
            _, got = self.serve.get(f"/v1/quotas/{a['name']}")
            return {"outcome": "value", "value": got["value"]}
        if op == "ratelimit.consume":
            policy = "sl" if self.row == "ratelimit-sl" else "win"
            status, _ = self.serve.post(f"/v1/limits/{policy}/consume", {"key": a["name"]})
            return {"outcome": "allowed" if status == 200 else "limited"}
        return {"error": "bad_argument"}


def main(argv: list[str]) -> None:
    binary = argv[argv.index("--bin") + 1] if "--bin" in argv else "redis-atomic"
    driver = Http(binary)
    try:
        serve(driver, code)
    finally:
        if driver.serve is not None:
            driver.serve.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
