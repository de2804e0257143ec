"""One client's run for tools/peer-bench.py: lock cycles (acquire + release) per second, the
redis_atomic package's ``Locks`` against redis-py's ``Lock``, the same workload.

`--client redis-atomic`: ``Locks.acquire(resource, ttl)`` then ``guard.release()`` (a fenced
lease: the lock_acquire script, then DELIFEQ / the release script). `--client redis-py`:
``Redis.lock(resource, timeout=ttl)``, ``acquire(blocking=False)`` then ``release()`` (SET NX
PX, then its release script). `--mode sync`: `--concurrency` threads; `--mode async`:
`--concurrency` asyncio tasks (uvloop when installed). Each worker cycles over resources of its
own, so no acquisition is ever refused; a refusal or an error fails the run. Prints one JSON
line like bench.py: cycles/s (as "rate"), the share of one core the server used meanwhile,
versions.
"""

import sys

from measure import parser, run

TTL = 10


def parse():
    ap = parser(__doc__, mode="sync", identities_help="resources each worker cycles over")
    ap.add_argument("--client", choices=["redis-atomic", "redis-py"], required=True)
    ap.add_argument("--pool-size", type=int, default=1, help="redis_atomic's connections")
    return ap.parse_args()


def sync_op(a):
    """A function (worker, i) -> None doing one lock cycle, for the chosen client."""
    url = f"redis://{a.host}:{a.port}"
    if a.client == "redis-atomic":
        import redis_atomic as ra
        locks = ra.Locks(ra.connect(url, pool_size=a.pool_size, timeout=30), "bench-lock")

        def cycle(w, i):
            guard = locks.acquire(f"res-{w}-{i % a.identities}", TTL)
            if not guard or not guard.release():
                raise RuntimeError(f"refused: {guard!r}")
        return cycle
    import redis
    r = redis.Redis(host=a.host, port=a.port)

    def cycle(w, i):
        lock = r.lock(f"res-{w}-{i % a.identities}", timeout=TTL)
        if not lock.acquire(blocking=False):
            raise RuntimeError("refused")
        lock.release()
    return cycle


async def async_op(a):
    """The same as a coroutine function, connected in the running event loop."""
    url = f"redis://{a.host}:{a.port}"
    if a.client == "redis-atomic":
        import redis_atomic as ra
        client = await ra.AsyncClient.connect(url, pool_size=a.pool_size, timeout=30)
        locks = ra.AsyncLocks(client, "bench-lock")

        async def cycle(w, i):
            guard = await locks.acquire(f"res-{w}-{i % a.identities}", TTL)
            if not guard or not await guard.release():
                raise RuntimeError(f"refused: {guard!r}")
        return cycle
    import redis.asyncio
    r = redis.asyncio.Redis(host=a.host, port=a.port)

    async def cycle(w, i):
        lock = r.lock(f"res-{w}-{i % a.identities}", timeout=TTL)
        if not await lock.acquire(blocking=False):
            raise RuntimeError("refused")
        await lock.release()
    return cycle


def main():
    a = parse()
    return run(a, f"lock bench ({a.client})", sync_op, async_op,
               ["redis-atomic", "redis", "uvloop"], "lock cycles")


if __name__ == "__main__":
    sys.exit(main())
