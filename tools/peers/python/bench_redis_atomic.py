"""One client's run for tools/peer-bench.py: the redis_atomic Python package (bindings/python)
over Redis, the same workload as bench.py runs for `limits`.

`--mode sync`: `--concurrency` threads each calling the blocking `RateLimiter.consume` (the GIL
is released while a call waits); `--mode async`: `--concurrency` asyncio tasks each awaiting
`AsyncRateLimiter.consume` (uvloop when installed). The limit, 10^9 per minute, is never reached,
so every decision is an admission; a refusal or an error fails the run. Prints one JSON line like
bench.py: decisions/s, the share of one core the server used meanwhile, versions.
"""

import sys

import redis_atomic as ra

from measure import admitted, identity, parser, run

ALGORITHMS = {
    "fixed-window": ra.Limit.fixed_window,
    "anchored-window": ra.Limit.anchored_window,
    "gcra": ra.Limit.gcra,
}
LIMIT, PERIOD = 10**9, 60


def parse():
    ap = parser(__doc__)
    ap.add_argument("--algorithm", choices=sorted(ALGORITHMS), default="fixed-window")
    ap.add_argument("--pool-size", type=int, default=1,
                    help="connections (default 1, like peer-bench's library default)")
    return ap.parse_args()


def sync_op(a):
    # A long timeout: on a loaded machine a starved client must not fail the run.
    client = ra.connect(f"redis://{a.host}:{a.port}", pool_size=a.pool_size, timeout=30)
    limiter = ra.RateLimiter(client, "bench-py", ALGORITHMS[a.algorithm](LIMIT, PERIOD))
    return lambda w, i: admitted(limiter.consume(identity(a.identities)))


async def async_op(a):
    client = await ra.AsyncClient.connect(
        f"redis://{a.host}:{a.port}", pool_size=a.pool_size, timeout=30)
    limiter = ra.AsyncRateLimiter(client, "bench-py", ALGORITHMS[a.algorithm](LIMIT, PERIOD))

    async def op(w, i):
        admitted(await limiter.consume(identity(a.identities)))
    return op


def main():
    a = parse()
    return run(a, "redis_atomic bench", sync_op, async_op, ["redis-atomic", "uvloop"],
               f"redis_atomic pool {a.pool_size}")


if __name__ == "__main__":
    sys.exit(main())
