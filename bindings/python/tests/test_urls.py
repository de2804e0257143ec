"""Every URL form from Python, each against real servers: a unix socket, a 3+3 Redis Cluster
(seed URLs; the lease primitives across many slots, from threads), and Sentinel. TLS, which
PyPI's Valkey build lacks, is in test_tls.py."""

from __future__ import annotations

import threading
from collections import Counter

import redis_atomic as ra
from redis_atomic.testing import RedisCluster, RedisServer, SentinelGroup


def test_unix_socket() -> None:
    with RedisServer(unix_socket=True) as server:
        assert server.url.startswith("redis+unix:///")
        client = ra.connect(server.url)
        guard = ra.Locks(client, "u").acquire("r", 10)
        assert isinstance(guard, ra.LockGuard) and guard.release() == ra.Released(guard.fence)
        assert ra.Quotas(client, "u").add("c", 2, (0, 5)) == ra.Applied(2)


def test_cluster(redis_cluster: RedisCluster) -> None:
    """Seed URLs: 16 threads lock 64 resources spread over the slots (never overlapping per
    resource, counted), a queue and an idempotency store work on the cluster."""
    client = ra.connect(redis_cluster.urls[:2], timeout=5)
    assert client.is_cluster
    ns = "cl"
    locks = ra.Locks(client, ns)
    inside: Counter[str] = Counter()
    most: Counter[str] = Counter()
    guard = threading.Lock()

    def worker(n: int) -> None:
        for i in range(16):
            resource = f"res-{(n * 7 + i) % 64}"
            got = locks.acquire(resource, 10, wait=30)
            assert isinstance(got, ra.LockGuard)
            with got:
                with guard:
                    inside[resource] += 1
                    most[resource] = max(most[resource], inside[resource])
                with guard:
                    inside[resource] -= 1

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(most.values()) == 1 and len(most) == 64
    queue = ra.Queue(client, ns, "jobs")
    for i in range(10):
        queue.enqueue(f"j{i}", b"x")
    jobs = queue.claim("w", 10, 10)
    assert isinstance(jobs, list) and len(jobs) == 10
    assert all(j.ack() == ra.Acked() for j in jobs)
    store = ra.Idempotency(client, ns)
    claims = [store.begin("s", f"k{i}", ["x"]) for i in range(10)]
    assert all(isinstance(c, ra.Claim) for c in claims)
    sem = ra.Semaphore(client, ns, "s", 1)
    permit = sem.acquire(5)
    assert isinstance(permit, ra.Permit) and isinstance(sem.acquire(5), ra.Full)


def test_sentinel(redis_sentinel: SentinelGroup) -> None:
    """redis+sentinel://: the client finds the primary through Sentinel."""
    assert redis_sentinel.url.startswith("redis+sentinel://127.0.0.1:")
    client = ra.connect(redis_sentinel.url)
    assert not client.is_cluster
    guard = ra.Locks(client, "sn").acquire("r", 10)
    assert isinstance(guard, ra.LockGuard) and guard.release() == ra.Released(guard.fence)
    assert redis_sentinel.nodes[0].command("EXISTS", "sn:lock:v1:{r}:fence") == 1
