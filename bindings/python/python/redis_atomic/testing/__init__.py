"""A pytest plugin: real, private servers for your tests, started the way the Rust testkit
starts them.

Registered through the ``pytest11`` entry point, so installing the package is enough::

    def test_checkout(redis_url: str) -> None:
        client = redis_atomic.connect(redis_url)
        ...

Fixtures:

* ``redis_server`` (session): a ``RedisServer`` — the binary from ``REDIS_ATOMIC_SERVER_BIN`` or
  ``redis-server`` on ``PATH`` (a Valkey ``valkey-server`` works the same), a fresh temp dir, a
  free port on 127.0.0.1, ready once it answers ``PING``, killed at teardown.
* ``redis_url`` (function): the server's URL, after ``FLUSHALL`` (each test starts empty).
* ``redis_cluster`` (session, started only by tests that ask for it): a ``RedisCluster`` of 3
  primaries with a replica each; ``redis_cluster.urls`` are the seeds.
* ``redis_tls`` (session, on demand): a ``RedisServer`` serving TLS only, with a certificate a
  throwaway CA signed (``redis_tls.tls``: the ``TlsMaterial``, its ``ca_file`` and client
  certificate) and client certificates required.
* ``redis_sentinel`` (session, on demand): a ``SentinelGroup``, a primary and a Sentinel;
  ``redis_sentinel.url`` is its ``redis+sentinel://`` URL.

A missing binary fails the test with what to install: a skipped test would prove nothing. The
classes also work without pytest (``with RedisServer() as server: ...``); a server can be
stalled (``server.stalled()``: SIGSTOP until the block ends) to test timeouts.
"""

from __future__ import annotations

from typing import Callable, Iterator

import pytest

from ._cluster import RedisCluster
from ._sentinel import SentinelGroup
from ._server import RedisServer, free_port, server_binary
from ._tls import TlsMaterial

__all__ = [
    "RedisServer",
    "RedisCluster",
    "SentinelGroup",
    "TlsMaterial",
    "server_binary",
    "free_port",
    "redis_server",
    "redis_url",
    "redis_cluster",
    "redis_tls",
    "redis_sentinel",
]


def _started(kind: str, start: Callable[[], object]) -> object:
    try:
        return start()
    except RuntimeError as e:
        pytest.fail(f"{kind}: {e}", pytrace=False)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A private redis-server (or valkey-server) for the whole session."""
    server = _started("redis_server", RedisServer)
    assert isinstance(server, RedisServer)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The session server's URL, emptied (``FLUSHALL``) for this test."""
    redis_server.flushall()
    return redis_server.url


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisCluster]:
    """A 3+3 Redis Cluster for the session (started by the first test that asks for it)."""
    cluster = _started("redis_cluster", RedisCluster)
    assert isinstance(cluster, RedisCluster)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def redis_tls() -> Iterator[RedisServer]:
    """A TLS-only server requiring client certificates, with its throwaway CA."""
    material = _started("redis_tls", TlsMaterial)
    assert isinstance(material, TlsMaterial)
    try:
        server = _started("redis_tls", lambda: RedisServer(tls=material, client_auth=True))
        assert isinstance(server, RedisServer)
        try:
            yield server
        finally:
            server.stop()
    finally:
        material.cleanup()


@pytest.fixture(scope="session")
def redis_sentinel() -> Iterator[SentinelGroup]:
    """A primary and a Sentinel monitoring it."""
    group = _started("redis_sentinel", SentinelGroup)
    assert isinstance(group, SentinelGroup)
    try:
        yield group
    finally:
        group.stop()
