"""One client's run for tools/peer-bench.py: the `limits` package over Redis.

Async by default (`limits.aio`, one event loop, `--concurrency` coroutines each awaiting one
`hit(item, identity)` at a time, on the storage's connection pool; uvloop when installed): on one
core this gets more out of Python than threads, which contend for the GIL (`--mode sync` runs
the same loop on `--concurrency` threads with the sync storage, to check). The limit, 10^9 per
minute, is never reached, so every decision is an admission, as in `redis-atomic bench`; a
refusal or an error fails the run. Prints one JSON line on stdout (decisions/s, the share of one
core the server used meanwhile from INFO cpu, versions); exit 1 on failure, 2 usage.
"""

import argparse
import asyncio
import importlib.metadata as md
import json
import platform
import random
import sys
import threading
import time

import limits
import limits.aio.storage
import limits.aio.strategies
import limits.storage
import limits.strategies
import redis

CLIENT_CPU = []  # this process's CPU seconds over the measured interval

STRATEGIES = {
    # INCRBY + EXPIRE on the first hit (one script); charges refused hits.
    "fixed-window": "FixedWindowRateLimiter",
    # A sliding log: one list entry per hit, LPUSH + LTRIM + EXPIRE (one script).
    "moving-window": "MovingWindowRateLimiter",
    # Two fixed-window counters weighted by the position in the window.
    "sliding-window-counter": "SlidingWindowCounterRateLimiter",
}
ITEM = limits.RateLimitItemPerMinute(10**9)


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--strategy", choices=sorted(STRATEGIES), default="fixed-window")
    ap.add_argument("--mode", choices=["async", "sync"], default="async")
    ap.add_argument("--implementation", choices=["redispy", "coredis"], default="redispy",
                    help="async Redis client under limits.aio")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=0.25)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--identities", type=int, default=100000)
    return ap.parse_args()


def server_cpu(a):
    """CPU seconds the server has used (INFO cpu, user + system), on a connection of its own."""
    with redis.Redis(host=a.host, port=a.port) as r:
        info = r.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def identity(n):
    return f"user-{random.randrange(n)}"


async def run_async(a):
    storage = limits.aio.storage.RedisStorage(
        f"async+redis://{a.host}:{a.port}", implementation=a.implementation,
        key_prefix=f"LIMITS-{a.strategy}")
    limiter = getattr(limits.aio.strategies, STRATEGIES[a.strategy])(storage)

    async def drive(until):
        async def worker():
            n = 0
            while time.monotonic() < until:
                if not await limiter.hit(ITEM, identity(a.identities)):
                    raise RuntimeError("refused")
                n += 1
            return n
        return sum(await asyncio.gather(*(worker() for _ in range(a.concurrency))))

    await drive(time.monotonic() + a.warmup)
    cpu = server_cpu(a)
    started, own = time.monotonic(), time.process_time()
    decisions = await drive(started + a.seconds)
    CLIENT_CPU.append(time.process_time() - own)
    return decisions, time.monotonic() - started, server_cpu(a) - cpu


def run_sync(a):
    storage = limits.storage.RedisStorage(
        f"redis://{a.host}:{a.port}", key_prefix=f"LIMITS-{a.strategy}")
    limiter = getattr(limits.strategies, STRATEGIES[a.strategy])(storage)
    errors = []

    def drive(until):
        counts = [0] * a.concurrency

        def worker(t):
            try:
                while time.monotonic() < until:
                    if not limiter.hit(ITEM, identity(a.identities)):
                        raise RuntimeError("refused")
                    counts[t] += 1
            except Exception as e:  # reported after the join, fails the run
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(a.concurrency)]
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
    decisions = drive(started + a.seconds)
    CLIENT_CPU.append(time.process_time() - own)
    return decisions, time.monotonic() - started, server_cpu(a) - cpu


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
            decisions, secs, cpu = runner(run_async(a))
        else:
            decisions, secs, cpu = run_sync(a)
    except Exception as e:
        print(f"python bench: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    client = a.implementation if a.mode == "async" else "redis (sync)"
    pkgs = ["limits", "redis", "coredis", "uvloop"]
    versions = {}
    for p in pkgs:
        try:
            versions[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    print(json.dumps({
        "decisions": decisions,
        "secs": secs,
        "rate": decisions / secs,
        "server_cpu": cpu / secs,
        # This process's CPU per decision (all its threads), over the measured seconds: what
        # the client costs, less disturbed by a loaded machine than the rate.
        "client_cpu_us": CLIENT_CPU[-1] / max(decisions, 1) * 1e6,
        "runtime": f"python {platform.python_version()} ({a.mode}, {loop}, {client})",
        "packages": versions,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
