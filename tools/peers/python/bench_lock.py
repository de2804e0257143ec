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

import argparse
import asyncio
import importlib.metadata as md
import json
import platform
import sys
import threading
import time

from bench import server_cpu  # the same INFO cpu reading as the limits peer

CLIENT_CPU = []  # this process's CPU seconds over the measured interval

TTL = 10


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--client", choices=["redis-atomic", "redis-py"], required=True)
    ap.add_argument("--mode", choices=["async", "sync"], default="sync")
    ap.add_argument("--pool-size", type=int, default=1, help="redis_atomic's connections")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=0.25)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--identities", type=int, default=100000,
                    help="resources each worker cycles over")
    return ap.parse_args()


def sync_cycle(a):
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


async def async_cycle(a):
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


def run_sync(a):
    cycle = sync_cycle(a)
    errors = []

    def drive(until):
        counts = [0] * a.concurrency

        def worker(w):
            try:
                i = 0
                while time.monotonic() < until:
                    cycle(w, i)
                    i += 1
                counts[w] = i
            except Exception as e:  # reported after the join, fails the run
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(a.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return sum(counts)

    drive(time.monotonic() + a.warmup)
    cpu = server_cpu(a)
    started, own = time.monotonic(), time.process_time()
    cycles = drive(started + a.seconds)
    CLIENT_CPU.append(time.process_time() - own)
    return cycles, time.monotonic() - started, server_cpu(a) - cpu


async def run_async(a):
    cycle = await async_cycle(a)

    async def drive(until):
        async def worker(w):
            i = 0
            while time.monotonic() < until:
                await cycle(w, i)
                i += 1
            return i
        return sum(await asyncio.gather(*(worker(w) for w in range(a.concurrency))))

    await drive(time.monotonic() + a.warmup)
    cpu = server_cpu(a)
    started, own = time.monotonic(), time.process_time()
    cycles = await drive(started + a.seconds)
    CLIENT_CPU.append(time.process_time() - own)
    return cycles, time.monotonic() - started, server_cpu(a) - cpu


def main():
    a = parse()
    loop = "threads"
    try:
        if a.mode == "async":
            try:
                import uvloop
                runner, loop = uvloop.run, "uvloop"
            except ImportError:
                runner, loop = asyncio.run, "asyncio"
            cycles, secs, cpu = runner(run_async(a))
        else:
            cycles, secs, cpu = run_sync(a)
    except Exception as e:
        print(f"lock bench ({a.client}): {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    versions = {}
    for p in ["redis-atomic", "redis", "uvloop"]:
        try:
            versions[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    print(json.dumps({
        "decisions": cycles,
        "secs": secs,
        "rate": cycles / secs,
        "server_cpu": cpu / secs,
        # This process's CPU per decision (all its threads), over the measured seconds: what
        # the client costs, less disturbed by a loaded machine than the rate.
        "client_cpu_us": CLIENT_CPU[-1] / max(cycles, 1) * 1e6,
        "runtime": f"python {platform.python_version()} ({a.mode}, {loop}, lock cycles)",
        "packages": versions,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
