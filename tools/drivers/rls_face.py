"""`rls`'s driver for `redis-atomic verify --driver` (docs/verify.md, "Drivers"): run with the rls
venv's Python (grpcio + xds-protos, `make rls-venv`), `rls_face.py --bin PATH/TO/redis-atomic`
starts `redis-atomic rls` on a loopback port against the server the harness names, with one
limit per row (10 per second: a sliding log for `ratelimit-sl`, envoyproxy/ratelimit's fixed
window for `ratelimit-win`), and asks it as Envoy does (`ShouldRateLimit`, one descriptor, one
hit). `UNAVAILABLE` (past `--deadline-ms`) and a deadline of the call are unknown outcomes: they
may have charged. Envoy never resends a decision, and neither does this driver.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Optional

import grpc
from envoy.extensions.common.ratelimit.v3 import ratelimit_pb2
from envoy.service.ratelimit.v3 import rls_pb2, rls_pb2_grpc

sys.dont_write_bytecode = True  # no __pycache__ beside the drivers
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_face import start_face  # noqa: E402
from protocol import Message, serve  # noqa: E402

ROWS = ["ratelimit-sl", "ratelimit-win"]
CONFIG = """domain: verify
descriptors:
  - key: sl
    rate_limit: {unit: second, requests_per_unit: 10, algorithm: sliding-log}
  - key: win
    rate_limit: {unit: second, requests_per_unit: 10}
"""
UNKNOWN = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def code(e: BaseException) -> Optional[str]:
    if isinstance(e, grpc.RpcError) and e.code() in UNKNOWN:
        return "outcome_unknown"
    return None


class Rls:
    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.proc: Optional[subprocess.Popen[str]] = None
        self.channel: Optional[grpc.Channel] = None
        self.stub: Optional[rls_pb2_grpc.RateLimitServiceStub] = None
        self.key = ""

    def stop(self) -> None:
        if self.channel is not None:
            self.channel.close()
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()

    def hello(self, msg: Message) -> Message:
        if msg.get("cluster"):
            return {"driver": "rls (gRPC)", "rows": [], "unsupported": "standalone only"}
        self.stop()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "verify.yaml")
            with open(path, "w") as f:
                f.write(CONFIG)
            deadline = "200" if msg.get("fault") else "10000"
            args = [self.binary, "rls", "--url", msg["url"], "--listen", "127.0.0.1:0",
                    "--namespace", msg["namespace"], "--config", path, "--deadline-ms", deadline]
            self.proc, line = start_face(args)
        self.channel = grpc.insecure_channel(line[len("http://"):])
        self.stub = rls_pb2_grpc.RateLimitServiceStub(self.channel)
        self.key = "sl" if msg["row"] == "ratelimit-sl" else "win"
        return {"driver": "rls (gRPC)", "rows": ROWS}

    def run(self, op: str, a: Message) -> Message:
        if op != "ratelimit.consume":
            return {"error": "bad_argument"}
        assert self.stub is not None
        entry = ratelimit_pb2.RateLimitDescriptor.Entry(key=self.key, value=a["name"])
        req = rls_pb2.RateLimitRequest(
            domain="verify",
            descriptors=[ratelimit_pb2.RateLimitDescriptor(entries=[entry])],
            hits_addend=1,
        )
        got = self.stub.ShouldRateLimit(req, timeout=30)
        ok = got.overall_code == rls_pb2.RateLimitResponse.OK
        return {"outcome": "allowed" if ok else "limited"}


def main(argv: list[str]) -> None:
    binary = argv[argv.index("--bin") + 1] if "--bin" in argv else "redis-atomic"
    driver = Rls(binary)
    try:
        serve(driver, code)
    finally:
        driver.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
