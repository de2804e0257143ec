"""One client's run for tools/peer-bench.py: the redis_atomic Python package (bindings/python)
over Redis, the same workload as bench.py runs for `limits`.

`--mode sync`: `--concurrency` threads each calling the blocking `RateLimiter.consume` (the GIL
is released while a call waits); `--mode async`: `--concurrency` asyncio tasks each awaiting
`AsyncRateLimiter.consume` (uvloop when installed). The limit, 10^9 per minute, is never reached,
so every decision is an admission; a refusal or an error fails the run. Prints one JSON line like
bench.py: decisions/s, the share of one core the server used meanwhile, versions.
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

import redis_atomic as ra

from bench import server_cpu  # the same INFO cpu reading as the limits peer

CLIENT_CPU = []  # this process's CPU seconds over the measured interval

ALGORITHMS = {
    "fixed-window": ra.Limit.fixed_window,
    "anchored-window": ra.Limit.anchored_window,
    "gcra": ra.Limit.gcra,
}
LIMIT, PERIOD = 10**9, 60


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="fixed-window")
    ap.add_argument("--mode", choices=["async", "sync"], default="async")
    ap.add_argument("--pool-size", type=int, default=1,
                    help="connections (default 1, like peer-bench's library default)")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=0.25)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--identities", type=int, default=100000)
    return ap.parse_args()


def identity(n):
    return f"user-{random.randrange(n)}"


def run_sync(a):
    # A long timeout: on a loaded machine a starved client must not fail the run.
    client = ra.connect(f"redis://{a.host}:{a.port}", pool_size=a.pool_size, timeout=30)
    limiter = ra.RateLimiter(client, "bench-py", ALGORITHMS[a.algorithm](LIMIT, PERIOD))
    errors = []

    def drive(until):
        counts = [0] * a.concurrency

        def worker(t):
            try:
                while time.monotonic() < until:
                    if not limiter.consume(identity(a.identities)):
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


async def run_async(a):
    client = await ra.AsyncClient.connect(
        f"redis://{a.host}:{a.port}", pool_size=a.pool_size, timeout=30)
    limiter = ra.AsyncRateLimiter(client, "bench-py", ALGORITHMS[a.algorithm](LIMIT, PERIOD))

    async def drive(until):
        async def worker():
            n = 0
            while time.monotonic() < until:
                if not await limiter.consume(identity(a.identities)):
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
        print(f"redis_atomic bench: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    versions = {}
    for p in ["redis-atomic", "uvloop"]:
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
        "runtime": f"python {platform.python_version()} ({a.mode}, {loop}, redis_atomic "
                   f"pool {a.pool_size})",
        "packages": versions,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
