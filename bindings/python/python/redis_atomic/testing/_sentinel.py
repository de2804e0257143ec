"""A Sentinel deployment of real processes: a primary and Sentinels monitoring it (no replica by
default: enough for a client to find the primary through Sentinel; the library's own tests
cover following it across failovers).

Ready once every Sentinel names the primary (``SENTINEL GET-MASTER-ADDR-BY-NAME``), polled with
a bound, never slept.
"""

from __future__ import annotations

import time
from typing import List

from ._server import RedisServer, stop_all

__all__ = ["SentinelGroup"]

READY_TIMEOUT = 30.0


class SentinelGroup:
    """``url`` is ``redis+sentinel://127.0.0.1:S1,.../<service>``; ``stop()`` kills every
    process."""

    def __init__(self, service: str = "redis-atomic", sentinels: int = 1, replicas: int = 0) -> None:
        self.service = service
        self.nodes: List[RedisServer] = []
        self.sentinels: List[RedisServer] = []
        try:
            self.nodes.append(RedisServer())
            primary = self.nodes[0]
            for _ in range(replicas):
                replica = RedisServer()
                replica.command("REPLICAOF", "127.0.0.1", primary.port)
                self.nodes.append(replica)
            quorum = sentinels // 2 + 1
            config = [
                f"sentinel monitor {service} 127.0.0.1 {primary.port} {quorum}",
                f"sentinel down-after-milliseconds {service} 1000",
                f"sentinel failover-timeout {service} 5000",
            ]
            for _ in range(sentinels):
                self.sentinels.append(RedisServer(extra=config, sentinel=True))
            self._wait_named()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{self.service}"

    def _wait_named(self) -> None:
        want = [b"127.0.0.1", str(self.nodes[0].port).encode()]
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            named = [
                s.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.service)
                for s in self.sentinels
            ]
            if all(n == want for n in named):
                return
            time.sleep(0.02)  # polling the condition, bounded by the deadline
        raise RuntimeError(f"the sentinels did not name the primary within {READY_TIMEOUT:.0f} s")

    def stop(self) -> None:
        stop_all(self.sentinels + self.nodes)

    def __enter__(self) -> SentinelGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
