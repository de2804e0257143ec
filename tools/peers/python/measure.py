"""The measuring loop and the JSON report shared by the Python peers of tools/peer-bench.py.

Why one module: every peer (bench.py for `limits`, bench_redis_atomic.py for the redis_atomic
rate limiter, bench_lock.py for lock cycles) must be measured the same way for the comparison
to be fair. A peer supplies only its operation, ``op(worker, i)``, which raises when a decision
is refused; this module runs it on `--concurrency` threads (`--mode sync`) or asyncio tasks
(`--mode async`, uvloop when installed) for `--warmup` and then `--seconds`, reads the server's
CPU (INFO cpu) and this process's CPU around the measured interval, and prints the one JSON line
peer-bench.py parses: decisions/s (as "rate"), the share of one core the server used, this
process's CPU per decision, versions. Exit 1 when the run fails, 2 on usage errors (argparse).
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

import redis


def parser(doc, mode="async", identities_help=None):
    """The options every peer takes; a peer adds its own before parsing."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--mode", choices=["async", "sync"], default=mode)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=0.25)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--identities", type=int, default=100000, help=identities_help)
    return ap


def server_cpu(a):
    """CPU seconds the server has used (INFO cpu, user + system), on a connection of its own."""
    with redis.Redis(host=a.host, port=a.port) as r:
        info = r.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def identity(n):
    """An identity drawn at random from n."""
    return f"user-{random.randrange(n)}"


def admitted(ok):
    """Fail the run on a refused decision: the limits are never reached."""
    if not ok:
        raise RuntimeError("refused")


def drive_threads(op, concurrency, until):
    """op(worker, i) on `concurrency` threads until `until`; the number of calls made."""
    counts, errors = [0] * concurrency, []

    def worker(w):
        try:
            i = 0
            while time.monotonic() < until:
                op(w, i)
                i += 1
            counts[w] = i
        except Exception as e:  # reported after the join, fails the run
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return sum(counts)


async def drive_tasks(op, concurrency, until):
    """await op(worker, i) on `concurrency` asyncio tasks until `until`; the calls made."""
    async def worker(w):
        i = 0
        while time.monotonic() < until:
            await op(w, i)
            i += 1
        return i
    return sum(await asyncio.gather(*(worker(w) for w in range(concurrency))))


def measure_sync(a, op):
    """Warm up, then measure: (calls, seconds, server CPU seconds, own CPU seconds)."""
    drive_threads(op, a.concurrency, time.monotonic() + a.warmup)
    cpu = server_cpu(a)
    started, own = time.monotonic(), time.process_time()
    calls = drive_threads(op, a.concurrency, started + a.seconds)
    own = time.process_time() - own
    return calls, time.monotonic() - started, server_cpu(a) - cpu, own


async def measure_async(a, make_op):
    """The same on asyncio tasks; `make_op(a)` is awaited in the loop (clients connect there)."""
    op = await make_op(a)
    await drive_tasks(op, a.concurrency, time.monotonic() + a.warmup)
    cpu = server_cpu(a)
    started, own = time.monotonic(), time.process_time()
    calls = await drive_tasks(op, a.concurrency, started + a.seconds)
    own = time.process_time() - own
    return calls, time.monotonic() - started, server_cpu(a) - cpu, own


def versions(packages):
    """{package: version} of those installed."""
    found = {}
    for p in packages:
        try:
            found[p] = md.version(p)
        except md.PackageNotFoundError:
            pass
    return found


def run(a, name, make_sync_op, make_async_op, packages, describe):
    """Measure in `a.mode` and print the JSON line; the exit code. `make_sync_op(a)` returns
    op; `make_async_op(a)` is a coroutine returning an async op; `describe` ends "runtime"."""
    loop = "threads"
    try:
        if a.mode == "async":
            try:
                import uvloop
                runner, loop = uvloop.run, "uvloop"
            except ImportError:
                runner, loop = asyncio.run, "asyncio"
            calls, secs, cpu, own = runner(measure_async(a, make_async_op))
        else:
            calls, secs, cpu, own = measure_sync(a, make_sync_op(a))
    except Exception as e:
        print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(json.dumps({
        "decisions": calls,
        "secs": secs,
        "rate": calls / secs,
        "server_cpu": cpu / secs,
        # This process's CPU per decision (all its threads), over the measured seconds: what
        # the client costs, less disturbed by a loaded machine than the rate.
        "client_cpu_us": own / max(calls, 1) * 1e6,
        "runtime": f"python {platform.python_version()} ({a.mode}, {loop}, {describe})",
        "packages": versions(packages),
    }))
    return 0
