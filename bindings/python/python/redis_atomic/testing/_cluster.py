"""A Redis Cluster of real processes (3 primaries with a replica each by default), formed the
way the Rust testkit forms one: plain commands (``CLUSTER SET-CONFIG-EPOCH``,
``ADDSLOTSRANGE``, ``MEET``, ``REPLICATE``) rather than ``redis-cli --cluster create``, so only
the server binary is needed, and ready only when every node reports ``cluster_state:ok``, knows
every other node, and every replica's link is up: tests never race the cluster's convergence.
"""

from __future__ import annotations

import time
from typing import Callable, List

from ._server import RedisServer, Reply, stop_all

__all__ = ["RedisCluster"]

FORM_TIMEOUT = 60.0


def _text(reply: Reply) -> str:
    return reply.decode() if isinstance(reply, bytes) else str(reply)


class RedisCluster:
    """``primaries`` primaries with ``replicas`` replicas each; ``urls`` are the seeds a client
    is given. ``stop()`` kills every node."""

    def __init__(self, primaries: int = 3, replicas: int = 1, node_timeout_ms: int = 1000) -> None:
        if not 1 <= primaries <= 16 or not 0 <= replicas <= 4:
            raise ValueError("primaries must be 1..=16 and replicas 0..=4")
        self.primaries, self.replicas = primaries, replicas
        self.node_timeout_ms = node_timeout_ms
        extra = [
            "cluster-enabled yes",
            "cluster-config-file nodes.conf",
            f"cluster-node-timeout {node_timeout_ms}",
            "repl-diskless-sync-delay 0",
        ]
        self.nodes: List[RedisServer] = []
        try:
            for _ in range(primaries * (1 + replicas)):
                self.nodes.append(RedisServer(extra=extra))
            self._form()
        except BaseException:
            self.stop()
            raise

    @property
    def urls(self) -> List[str]:
        """Every node's URL (seeds for ``redis_atomic.connect([...])``)."""
        return [n.url for n in self.nodes]

    def _form(self) -> None:
        for i, node in enumerate(self.nodes):
            node.command("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
        per = 16384 // self.primaries
        for i, node in enumerate(self.nodes[: self.primaries]):
            end = 16383 if i + 1 == self.primaries else (i + 1) * per - 1
            node.command("CLUSTER", "ADDSLOTSRANGE", i * per, end)
        for node in self.nodes[1:]:
            self.nodes[0].command("CLUSTER", "MEET", "127.0.0.1", node.port)
        self._wait("every node knows every node", self._knows_all, nudge=self._meet_missing)
        ids = [_text(n.command("CLUSTER", "MYID")) for n in self.nodes[: self.primaries]]
        for r in range(self.replicas):
            for p, primary_id in enumerate(ids):
                replica = self.nodes[self.primaries + r * self.primaries + p]
                replica.command("CLUSTER", "REPLICATE", primary_id)
        self._wait("cluster_state:ok and replicas linked everywhere", self._ready)

    def _knows_all(self, node: RedisServer) -> bool:
        text = _text(node.command("CLUSTER", "NODES"))
        lines = text.strip().splitlines()
        return len(lines) == len(self.nodes) and "handshake" not in text and "noaddr" not in text

    def _meet_missing(self) -> None:
        """MEETs again, from the first node, any node it does not know yet: the server drops a
        handshake that outlives the node timeout, and nobody retries it (a loaded machine)."""
        known = _text(self.nodes[0].command("CLUSTER", "NODES"))
        for node in self.nodes[1:]:
            addr = f" 127.0.0.1:{node.port}@"
            if not any(addr in line and "handshake" not in line for line in known.splitlines()):
                self.nodes[0].command("CLUSTER", "MEET", "127.0.0.1", node.port)

    def _ready(self, node: RedisServer) -> bool:
        info = self._cluster_info(node)
        repl = node.info("replication")
        ok = (
            info.get("cluster_state") == "ok"
            and info.get("cluster_slots_ok") == "16384"
            and info.get("cluster_known_nodes") == str(len(self.nodes))
        )
        if repl.get("role") == "master":
            online = sum("state=online" in v for k, v in repl.items() if k.startswith("slave"))
            return ok and repl.get("connected_slaves") == str(self.replicas) and online == self.replicas
        return ok and repl.get("master_link_status") == "up"

    @staticmethod
    def _cluster_info(node: RedisServer) -> dict[str, str]:
        text = _text(node.command("CLUSTER", "INFO"))
        pairs = (line.strip().split(":", 1) for line in text.splitlines() if ":" in line)
        return {k: v for k, v in pairs}

    def _wait(
        self,
        what: str,
        check: Callable[[RedisServer], bool],
        nudge: Callable[[], None] = lambda: None,
    ) -> None:
        """Waits (bounded) until ``check`` holds on every node, nudging every twice the node
        timeout; a node slow to answer is "not yet"."""
        deadline = time.monotonic() + FORM_TIMEOUT
        every = 2 * max(self.node_timeout_ms, 100) / 1000
        next_nudge = time.monotonic() + every
        last = ""
        while time.monotonic() < deadline:
            try:
                if all(check(n) for n in self.nodes):
                    return
            except (OSError, RuntimeError) as e:
                last = f" (last error: {e})"
            if time.monotonic() > next_nudge:
                nudge()
                next_nudge = time.monotonic() + every
            time.sleep(0.02)  # polling the condition, bounded by the deadline
        raise RuntimeError(f"cluster not formed within {FORM_TIMEOUT:.0f} s: {what}{last}")

    def stop(self) -> None:
        stop_all(self.nodes)

    def __enter__(self) -> RedisCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
