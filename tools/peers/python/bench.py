"""One client's run for tools/peer-bench.py: the `limits` package over Redis.

Async by default (`limits.aio`, one event loop, `--concurrency` coroutines each awaiting one
`hit(item, identity)` at a time, on the storage's connection pool; uvloop when installed): on one
core this gets more out of Python than threads, which contend for the GIL (`--mode sync` runs
the same loop on `--concurrency` threads with the sync storage, to check). The limit, 10^9 per
minute, is never reached, so every decision is an admission, as in `redis-atomic bench`; a
refusal or an error fails the run. Prints one JSON line on stdout (decisions/s, the share of one
core the server used meanwhile from INFO cpu, versions); exit 1 on failure, 2 usage.
"""

import sys

import limits
import limits.aio.storage
import limits.aio.strategies
import limits.storage
import limits.strategies

from measure import admitted, identity, parser, run

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
    ap = parser(__doc__)
    ap.add_argument("--strategy", choices=sorted(STRATEGIES), default="fixed-window")
    ap.add_argument("--implementation", choices=["redispy", "coredis"], default="redispy",
                    help="async Redis client under limits.aio")
    return ap.parse_args()


def sync_op(a):
    storage = limits.storage.RedisStorage(
        f"redis://{a.host}:{a.port}", key_prefix=f"LIMITS-{a.strategy}")
    limiter = getattr(limits.strategies, STRATEGIES[a.strategy])(storage)
    return lambda w, i: admitted(limiter.hit(ITEM, identity(a.identities)))


async def async_op(a):
    storage = limits.aio.storage.RedisStorage(
        f"async+redis://{a.host}:{a.port}", implementation=a.implementation,
        key_prefix=f"LIMITS-{a.strategy}")
    limiter = getattr(limits.aio.strategies, STRATEGIES[a.strategy])(storage)

    async def op(w, i):
        admitted(await limiter.hit(ITEM, identity(a.identities)))
    return op


def main():
    a = parse()
    client = a.implementation if a.mode == "async" else "redis (sync)"
    return run(a, "python bench", sync_op, async_op, ["limits", "redis", "coredis", "uvloop"],
               client)


if __name__ == "__main__":
    sys.exit(main())
