#!/usr/bin/env python3
"""Rate-limit decisions/s of redis-atomic against raw redis-rs and the Node and Python peers.

Why: to compare the library with what people would otherwise use, measured honestly on one
machine: one private redis-server pinned to one core, every client pinned to the
other (taskset), the clients alternating round by round (so drift on a shared machine hits all
alike), FLUSHALL before every run, and the same workload for all: every decision an admission
(limits of 10^9 per minute, never reached), --concurrency requests in flight per client, each
decision for an identity drawn at random from --identities.

Clients (--only, repeatable; default all):
  ra-fw            `redis-atomic bench --only ratelimit-fw`: the library's fixed window, the same
                   script as raw redis-rs EVALSHA, and the classic INCR + EXPIRE script (reference)
  ra-aw            `redis-atomic bench --only ratelimit-aw`: the anchored window (no TIME); raw;
                   INCR + EXPIRE again (reference)
  ra-gcra          `redis-atomic bench --only ratelimit`: GCRA; raw; the classic float GCRA
                   (the library series of these three batch decisions that queue up: natural
                   batching, on by default)
  ra-fw-unbatched, ra-aw-unbatched, ra-gcra-unbatched
                   the same with `--no-batching`: the library one call per decision (and raw,
                   reference again), to compare with the batched series in the same run
  ra-fw-module, ra-aw-module, ra-gcra-module, ra-lock-module
                   the same bench entries (ratelimit-fw, ratelimit-aw, ratelimit, lock) against
                   a second private redis-server, pinned alike, that loads the server module
                   (--module, default `redis-atomic module path`): the library runs the natives,
                   raw redis-rs the scripts (EVALSHA) on that server (docs/module.md)
  ra-node          this repository's Node package (bindings/node, TypeScript on ioredis, its
                   committed dist/): its anchored window (a window opened by the identity's
                   first request: the semantics of RateLimiterRedis) over one connection
  ra-node-fw       the same package, its clock-aligned fixed window (both batch decisions that
                   queue up: natural batching, on by default)
  ra-node-unbatched, ra-node-fw-unbatched
                   the same with `batching: false`: one script call per decision
  ra-node-lock     lock cycles of the Node package's Locks (acquire, then release) on
                   --concurrency async workers over one connection, each worker cycling over
                   resources of its own
  redlock-lock     node-redlock's acquire (one server, no retries), then release: the same
                   workload over one ioredis connection
  ioredis-ceiling-2x8, ioredis-ceiling-4x4, ioredis-ceiling-shared-2x8, ioredis-ceiling-shared-4x4
                   the ceiling of any package on ioredis: no package code, --concurrency
                   decisions in flight as calls of 8 (or 4) decisions, keys formed as the package
                   forms a limiter's, arguments laid out as the plain batch (or, shared, once),
                   against a server script that decides nothing (one canned admission per key)
  rlflx            Node rate-limiter-flexible RateLimiterRedis over ioredis (fixed window, Lua)
  rlflx-nonatomic  Node RateLimiterRedisNonAtomic (the same window as MULTI/EXEC, no Lua)
  limits-fw        Python `limits` FixedWindowRateLimiter (limits.aio, redis-py asyncio, uvloop)
  limits-mw        Python `limits` MovingWindowRateLimiter (a sliding log), same client
  ra-py-sync       the redis_atomic Python package (bindings/python), fixed window, blocking
                   RateLimiter.consume on --concurrency threads (--connections connections)
  ra-py-async      the same, AsyncRateLimiter.consume on --concurrency asyncio tasks (uvloop)
  ra-py-lock-sync  lock cycles (acquire + release) of the redis_atomic package's Locks on
                   --concurrency threads, each over resources of its own (never refused)
  ra-py-lock-async the same, AsyncLocks on --concurrency asyncio tasks (uvloop)
  redispy-lock-sync   redis-py's Lock (SET NX PX, then its release script), the same workload
  redispy-lock-async  redis.asyncio's Lock, the same workload on asyncio tasks
  go-redis-rate    go-redis/redis_rate (GCRA, Lua) over go-redis v9 (tools/peers/go)
  ra-go-gcra       this repository's Go module (bindings/go): its GCRA, the same go-redis client
  ra-go-aw         the same module, its anchored window
  redsync-lock     go-redsync's Mutex (SET NX PX, then its delete script): lock cycles
  ra-go-lock       the Go module's Locks (lock_acquire, then lock_release): lock cycles
  ra-go-gcra-unbatched, ra-go-aw-unbatched, ra-go-lock-unbatched
                   the same with the module's batching off (WithBatching(NoBatching())); the
                   series above batch decisions that queue up (on by default)
                   (the Go clients: --concurrency goroutines, one go-redis connection per
                   operation in flight, as go-redis does not multiplex; built by `go build`
                   from tools/peers/go into --cache)
  ra-java-gcra     this repository's Java library (bindings/java), GCRA, blocking consume on
                   --concurrency threads (tools/peers/java, built with Maven first)
  redisson-rl      Redisson RRateLimiter.tryAcquire, the same threads and identities
  bucket4j         Bucket4j's Lettuce proxy manager (compare-and-swap), tryConsume(1)
  ra-java-lock     lock cycles of the Java library's Locks on --concurrency threads
  redisson-lock    Redisson RLock cycles (tryLock + unlock), the same workload
  redisson-fenced  Redisson RFencedLock cycles (tryLockAndGetToken + unlock)

The Python clients also report their own process's CPU per decision or cycle over the measured
seconds ("client cpu" lines): on a shared machine a far steadier comparison than the rates.

The peers are installed on demand outside the repository, under --cache (default
~/.cache/redis-atomic-peers): Node packages by `npm ci` from tools/peers/node/package-lock.json,
Python packages into a venv from tools/peers/python/requirements.txt, and for ra-py-* the
package itself by `pip install ./bindings/python` into that venv (a release build). Needs redis-server,
taskset (unless --no-pin), node + npm and python3 for the peers, and the CLI (--bin; default
target/release/redis-atomic, $CARGO_TARGET_DIR/release/redis-atomic, else the debug build).

Exit codes: 0 ok; 1 a client's run failed (an error or a refused decision); 2 usage, a missing
tool, a failed install (no network?), or the server did not start; 130 interrupted.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, str(ROOT / "tools/peers"))
from harness import (PEERS, Fail, Procs, Server, prepare_node, prepare_python,  # noqa: E402
                     prepare_redis_atomic, progress, resp)

NODE, PYTHON, PYRA, PYLOCK = "node", "python", "redis-atomic-python", "python-lock"
MODULE = "bench-module"  # a bench entry against the server that loads the module
GO, GOLOCK = "go", "go-lock"
JAVA, JAVALOCK = "java", "java-lock"  # tools/peers/java: peers.Bench --client <target>
# client -> (kind, what it runs, [series it reports: (key, label)]).
CLIENTS = {
    "ra-fw": ("bench", "ratelimit-fw", [
        ("library", "redis-atomic library, fixed window"),
        ("raw", "redis-rs EVALSHA, rl_fixed_window (raw)"),
        ("reference", "redis-rs EVALSHA, classic INCR+EXPIRE"),
    ]),
    "ra-aw": ("bench", "ratelimit-aw", [
        ("library", "redis-atomic library, anchored window"),
        ("raw", "redis-rs EVALSHA, rl_anchored_window (raw)"),
        ("reference", "redis-rs EVALSHA, classic INCR+EXPIRE"),
    ]),
    "ra-gcra": ("bench", "ratelimit", [
        ("library", "redis-atomic library, GCRA"),
        ("raw", "redis-rs EVALSHA, rl_gcra (raw)"),
        ("reference", "redis-rs EVALSHA, classic float GCRA"),
    ]),
    "ra-fw-unbatched": ("bench", "ratelimit-fw --no-batching", [
        ("library", "redis-atomic library, fixed window, unbatched"),
    ]),
    "ra-aw-unbatched": ("bench", "ratelimit-aw --no-batching", [
        ("library", "redis-atomic library, anchored window, unbatched"),
    ]),
    "ra-gcra-unbatched": ("bench", "ratelimit --no-batching", [
        ("library", "redis-atomic library, GCRA, unbatched"),
    ]),
    "ra-fw-module": (MODULE, "ratelimit-fw", [
        ("library", "redis-atomic library + module, fixed window"),
        ("raw", "redis-rs EVALSHA, rl_fixed_window, module loaded"),
    ]),
    "ra-aw-module": (MODULE, "ratelimit-aw", [
        ("library", "redis-atomic library + module, anchored win."),
        ("raw", "redis-rs EVALSHA, rl_anchored_window, module"),
    ]),
    "ra-gcra-module": (MODULE, "ratelimit", [
        ("library", "redis-atomic library + module, GCRA"),
        ("raw", "redis-rs EVALSHA, rl_gcra, module loaded"),
    ]),
    "ra-lock-module": (MODULE, "lock", [
        ("library", "redis-atomic library + module, lock cycles"),
        ("raw", "redis-rs EVALSHA, lock scripts, module loaded"),
    ]),
    "ra-node": (NODE, "redis-atomic", [("rate", "redis-atomic Node package, anchored window")]),
    "ra-node-fw": (NODE, "redis-atomic-fw", [("rate", "redis-atomic Node package, fixed window")]),
    "ra-node-unbatched": (NODE, "redis-atomic-unbatched", [
        ("rate", "redis-atomic Node package, anchored window, unbatched")]),
    "ra-node-fw-unbatched": (NODE, "redis-atomic-fw-unbatched", [
        ("rate", "redis-atomic Node package, fixed window, unbatched")]),
    "ra-node-lock": (NODE, "redis-atomic-lock", [
        ("rate", "redis-atomic Node package Locks, cycles")]),
    "redlock-lock": (NODE, "redlock", [("rate", "node-redlock, cycles")]),
    "ioredis-ceiling-2x8": (NODE, "ceiling-2x8", [("rate", "ioredis alone, 2 calls of 8 canned")]),
    "ioredis-ceiling-4x4": (NODE, "ceiling-4x4", [("rate", "ioredis alone, 4 calls of 4 canned")]),
    "ioredis-ceiling-shared-2x8": (NODE, "ceiling-shared-2x8", [
        ("rate", "ioredis alone, 2 calls of 8, args once")]),
    "ioredis-ceiling-shared-4x4": (NODE, "ceiling-shared-4x4", [
        ("rate", "ioredis alone, 4 calls of 4, args once")]),
    "rlflx": (NODE, "redis", [("rate", "rate-limiter-flexible RateLimiterRedis")]),
    "rlflx-nonatomic": (NODE, "redis-nonatomic", [
        ("rate", "rate-limiter-flexible RateLimiterRedisNonAtomic")]),
    "limits-fw": (PYTHON, "fixed-window", [("rate", "limits FixedWindowRateLimiter")]),
    "limits-mw": (PYTHON, "moving-window", [("rate", "limits MovingWindowRateLimiter")]),
    "ra-py-sync": (PYRA, "sync", [("rate", "redis_atomic Python, fixed window, threads")]),
    "ra-py-async": (PYRA, "async", [("rate", "redis_atomic Python, fixed window, asyncio")]),
    "ra-py-lock-sync": (PYLOCK, ("redis-atomic", "sync"), [
        ("rate", "redis_atomic Python Locks, cycles, threads")]),
    "ra-py-lock-async": (PYLOCK, ("redis-atomic", "async"), [
        ("rate", "redis_atomic Python Locks, cycles, asyncio")]),
    "redispy-lock-sync": (PYLOCK, ("redis-py", "sync"), [
        ("rate", "redis-py Lock, cycles, threads")]),
    "redispy-lock-async": (PYLOCK, ("redis-py", "async"), [
        ("rate", "redis-py Lock (asyncio), cycles, asyncio")]),
    "go-redis-rate": (GO, "redis_rate", [("rate", "go-redis/redis_rate, GCRA")]),
    "ra-go-gcra": (GO, "ra-gcra", [("rate", "redis-atomic Go module, GCRA")]),
    "ra-go-aw": (GO, "ra-aw", [("rate", "redis-atomic Go module, anchored window")]),
    "redsync-lock": (GOLOCK, "redsync", [("rate", "redsync Mutex, cycles, goroutines")]),
    "ra-go-lock": (GOLOCK, "ra-lock", [("rate", "redis-atomic Go Locks, cycles, goroutines")]),
    "ra-go-gcra-unbatched": (GO, "ra-gcra-unbatched", [
        ("rate", "redis-atomic Go module, GCRA, unbatched")]),
    "ra-go-aw-unbatched": (GO, "ra-aw-unbatched", [
        ("rate", "redis-atomic Go module, anchored window, unbatched")]),
    "ra-go-lock-unbatched": (GOLOCK, "ra-lock-unbatched", [
        ("rate", "redis-atomic Go Locks, cycles, unbatched")]),
    "ra-java-gcra": (JAVA, "ra-gcra", [("rate", "redis-atomic Java library, GCRA, threads")]),
    "redisson-rl": (JAVA, "redisson-rl", [("rate", "Redisson RRateLimiter, threads")]),
    "bucket4j": (JAVA, "bucket4j", [("rate", "Bucket4j Lettuce proxy manager, threads")]),
    "ra-java-lock": (JAVALOCK, "ra-lock", [("rate", "redis-atomic Java Locks, cycles, threads")]),
    "redisson-lock": (JAVALOCK, "redisson-lock", [("rate", "Redisson RLock, cycles, threads")]),
    "redisson-fenced": (JAVALOCK, "redisson-fenced", [
        ("rate", "Redisson RFencedLock, cycles, threads")]),
}
# Lock-cycle series: compared only with each other (cycles/s, not decisions/s).
LOCK_CYCLES = {c for c, (kind, _, _) in CLIENTS.items() if kind in (PYLOCK, GOLOCK, JAVALOCK)}
LOCK_CYCLES |= {"ra-lock-module", "ra-node-lock", "redlock-lock"}
# Series the ratios divide by (the library's medians).
LIBRARY = [("ra-fw/library", "lib fw ÷"), ("ra-aw/library", "lib aw ÷"),
           ("ra-gcra/library", "lib gcra ÷"), ("ra-fw-module/library", "mod fw ÷"),
           ("ra-aw-module/library", "mod aw ÷"), ("ra-py-sync/rate", "py sync ÷"),
           ("ra-py-async/rate", "py async ÷"), ("ra-py-lock-sync/rate", "lock sync ÷"),
           ("ra-py-lock-async/rate", "lock async ÷"),
           ("ra-node/rate", "node pkg ÷"), ("ra-node-lock/rate", "node lock ÷"),
           ("ra-go-gcra/rate", "go gcra ÷"),
           ("ra-go-aw/rate", "go aw ÷"), ("ra-go-lock/rate", "go lock ÷"),
           ("ra-java-gcra/rate", "java ÷"),
           ("ra-java-lock/rate", "java lock ÷")]
JAVA_PEERS = ROOT / "tools/peers/java"
NODE_PACKAGE = ROOT / "bindings/node"
TIMEOUT_MARGIN = 60.0


def prepare_go(procs, cache):
    """Builds the Go peers (tools/peers/go: the Go module, redis_rate, redsync) into cache."""
    if not shutil.which("go"):
        raise Fail("go not found (the Go clients need Go >= 1.26)")
    out = cache / "peer-go"
    cache.mkdir(parents=True, exist_ok=True)
    progress("building the Go peers (go build in tools/peers/go)")
    procs.run(["go", "build", "-o", str(out), "."], 600, "go build", cwd=PEERS / "go")
    return str(out)


def find_cli(explicit):
    if explicit:
        if not Path(explicit).is_file():
            raise Fail(f"--bin {explicit}: no such file")
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    for c in (ROOT / "target/release/redis-atomic", target / "release/redis-atomic",
              ROOT / "target/debug/redis-atomic", target / "debug/redis-atomic"):
        if c.is_file():
            return str(c)
    raise Fail("no redis-atomic binary: cargo build --release -p redis-atomic-cli, or --bin")


def find_module(explicit, cli):
    """The server module's .so: --module, else what `redis-atomic module path` prints."""
    path = explicit or version_of([cli, "module", "path"])
    if not path or not Path(path).is_file():
        raise Fail(f"no server module at {path!r}: cargo build --release -p redis-atomic-module, "
                   "or --module")
    return str(Path(path).resolve())


def version_of(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def redis_rs_version():
    lock = (ROOT / "Cargo.lock").read_text().split("\n[[package]]\n")
    for block in lock:
        if 'name = "redis"\n' in block + "\n":
            return next((l.split('"')[1] for l in block.splitlines() if l.startswith("version")),
                        "?")
    return "?"


def load():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Runner:
    """Runs one client once against the server, pinned: {series key: (decisions/s, the share of
    one core the server used meanwhile)}."""

    def __init__(self, a, procs, server, pin, cli, node_dir, py, go_bin=None, module=None):
        self.a, self.procs, self.server, self.pin = a, procs, server, pin
        self.module_server = module  # the server that loads the module (module clients only)
        self.cli, self.node_dir, self.py, self.go_bin = cli, node_dir, py, go_bin
        self.versions = {}
        self.bench_connections = None
        self.client_cpu = {}  # client -> [its own CPU µs per decision, per round] (Python)

    def port_of(self, client):
        """The port of the server `client` runs against."""
        return (self.module_server if CLIENTS[client][0] == MODULE else self.server).port

    def run(self, client):
        kind, target, _ = CLIENTS[client]
        a, port = self.a, self.port_of(client)
        common = ["--seconds", str(a.seconds), "--concurrency", str(a.concurrency),
                  "--identities", str(a.identities)]
        if kind in ("bench", MODULE):
            # ABBA inside one invocation: raw, library, reference, reference, library, raw; each
            # path --seconds in all. Three paths plus warm-ups and connecting.
            entry, *flags = target.split()  # an entry, then flags (`--no-batching`)
            cmd = [self.cli, "bench", "--url", f"redis://127.0.0.1:{port}", "--json",
                   "--only", entry, "--rounds", "2", "--connections", str(a.connections)
                   ] + flags + common
            out = self.procs.run(self.pin + cmd, 3 * a.seconds + TIMEOUT_MARGIN, client)
            row = json.loads(out)["benches"][0]
            self.bench_connections = json.loads(out)["connections"]
            paths = {"library": row["library"], "raw": row["raw"]}
            if row.get("reference"):
                paths["reference"] = row["reference"]["stats"]
            return {k: (p["decisions_per_sec"], p["server_cpu"]) for k, p in paths.items()}
        if kind in (JAVA, JAVALOCK):
            cp = f"{JAVA_PEERS}/target/classes:{(JAVA_PEERS / 'target/cp.txt').read_text().strip()}"
            cmd = ["java", "-cp", cp, "peers.Bench", "--port", str(port), "--client", target] + common
            out = self.procs.run(self.pin + cmd, a.seconds + TIMEOUT_MARGIN, client)
        elif kind == NODE:
            cmd = ["node", "bench.mjs", "--port", str(port), "--limiter", target] + common
            if target.startswith("redis-atomic"):
                cmd += ["--package", str(NODE_PACKAGE)]
            out = self.procs.run(self.pin + cmd, a.seconds + TIMEOUT_MARGIN, client,
                                 cwd=self.node_dir)
        elif kind in (GO, GOLOCK):
            cmd = [self.go_bin, "--port", str(port), "--client", target] + common
            out = self.procs.run(self.pin + cmd, a.seconds + TIMEOUT_MARGIN, client)
        elif kind == PYLOCK:
            lock_client, mode = target
            cmd = [str(self.py), str(PEERS / "python/bench_lock.py"), "--port", str(port),
                   "--client", lock_client, "--mode", mode,
                   "--pool-size", str(a.connections)] + common
            out = self.procs.run(self.pin + cmd, a.seconds + TIMEOUT_MARGIN, client)
        elif kind == PYRA:
            cmd = [str(self.py), str(PEERS / "python/bench_redis_atomic.py"), "--port",
                   str(port), "--mode", target, "--algorithm", "fixed-window",
                   "--pool-size", str(a.connections)] + common
            out = self.procs.run(self.pin + cmd, a.seconds + TIMEOUT_MARGIN, client)
        else:
            cmd = [str(self.py), str(PEERS / "python/bench.py"), "--port", str(port),
                   "--strategy", target, "--mode", a.python_mode] + common
            out = self.procs.run(self.pin + cmd, a.seconds + TIMEOUT_MARGIN, client)
        got = json.loads(out.strip().splitlines()[-1])
        if "client_cpu_us" in got:
            self.client_cpu.setdefault(client, []).append(got["client_cpu_us"])
        self.versions[kind] = got["runtime"]
        for name, v in got["packages"].items():
            self.versions[f"{kind} package {name}"] = v
        return {"rate": (got["rate"], got["server_cpu"])}


def measure(a, runner):
    """Rounds of every client, the order reversed every other round (ABBA); FLUSHALL before
    each run. {"client/key": [(decisions/s, server cpu) per round]}."""
    rates = {f"{c}/{k}": [] for c in a.only for k, _ in CLIENTS[c][2]}
    for r in range(a.rounds):
        order = a.only if r % 2 == 0 else list(reversed(a.only))
        for client in order:
            resp(runner.port_of(client), "FLUSHALL")
            got = runner.run(client)
            # A client reports the series it declares (an unbatched bench run measures its raw
            # and reference paths too: the batched run's are the figures).
            got = {k: v for k, v in got.items() if f"{client}/{k}" in rates}
            for key, rate in got.items():
                rates[f"{client}/{key}"].append(rate)
            shown = ", ".join(f"{k} {v:,.0f}/s (srv cpu {c:.0%})" for k, (v, c) in got.items())
            progress(f"round {r + 1}/{a.rounds} {client}: {shown}")
    return {k: v for k, v in rates.items() if v}


def summarize(rates):
    """One row per series: rates, median, the server's median CPU share, and the library's
    medians over this one."""
    medians = {k: statistics.median(r for r, _ in v) for k, v in rates.items()}
    rows = []
    for client, (_, _, series) in CLIENTS.items():
        for key, label in series:
            name = f"{client}/{key}"
            if name not in rates:
                continue
            ratios = {lib: medians[lib] / medians[name] for lib, _ in LIBRARY if lib in medians
                      and (lib.split("/")[0] in LOCK_CYCLES) == (client in LOCK_CYCLES)}
            rows.append({"series": name, "label": label, "rates": [r for r, _ in rates[name]],
                         "median": medians[name],
                         "server_cpu": statistics.median(c for _, c in rates[name]),
                         "library_over_this": ratios})
    return rows


def write_table(report, out):
    s = report["settings"]
    print(f"rate-limit decisions/s: {s['rounds']} round(s) × {s['seconds']} s per client, "
          f"{s['concurrency']} in flight per client, identities {s['identities']}, every "
          "decision an admission; srv cpu: the share of one core redis-server used (median)",
          file=out)
    if s["bench_connections"]:
        print(f"redis-atomic library and raw redis-rs: {s['bench_connections']} connections "
              "(the library's default pool); Node: one ioredis connection; Python: its pool",
              file=out)
    rows = report["rows"]
    rounds = max(len(r["rates"]) for r in rows)
    libs = [(lib, head) for lib, head in LIBRARY if any(lib in r["library_over_this"]
                                                         for r in rows)]
    head = f"{'series':<48}" + "".join(f"{'round ' + str(i + 1):>10}" for i in range(rounds))
    head += f"{'median':>10}{'srv cpu':>9}" + "".join(f"{h:>12}" for _, h in libs)
    print(head, file=out)
    for r in rows:
        line = f"{r['label']:<48}" + "".join(f"{x:>10,.0f}" for x in r["rates"])
        line += " " * 10 * (rounds - len(r["rates"])) + f"{r['median']:>10,.0f}"
        line += f"{r['server_cpu']:>9.0%}"
        line += "".join(f"{r['library_over_this'].get(lib, 0):>12.2f}" for lib, _ in libs)
        print(line, file=out)
    if libs:
        print("lib fw ÷, lib gcra ÷: the library's median (fixed window, GCRA) over the row's;",
              "py sync ÷, py async ÷: the Python package's; lock sync ÷, lock async ÷: the",
              "Python package's lock cycles/s over the row's (lock rows only)", file=out)
    print("", file=out)
    for k, v in report["client_cpu_us"].items():
        print(f"client cpu: {k}: {v:.1f} µs of the client process's CPU per decision or "
              "cycle (median; less disturbed by a loaded machine than the rates)", file=out)
    for k, v in report["pinned"].items():
        print(f"pinned: {k}: {v}", file=out)
    for k, v in report["versions"].items():
        print(f"version: {k}: {v}", file=out)
    print(f"load average: start {report['load_start']}, end {report['load_end']}", file=out)


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__.split(
        "\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every client (default 3)")
    ap.add_argument("--seconds", type=float, default=5.0,
                    help="measured seconds per client (and per bench path) per round")
    ap.add_argument("--concurrency", type=int, default=16, help="requests in flight per client")
    ap.add_argument("--connections", type=int, default=1,
                    help="connections of the library and raw redis-rs (default 1, like "
                         "rate-limiter-flexible's one ioredis connection; the library's own "
                         "default pool is 4: more, smaller pipelined batches, more server time "
                         "per decision)")
    ap.add_argument("--identities", type=int, default=100000,
                    help="identities each decision draws from at random (1: one hot identity)")
    ap.add_argument("--only", action="append", choices=list(CLIENTS),
                    help="only these clients (repeatable; default all)")
    ap.add_argument("--bin", help="redis-atomic CLI binary")
    ap.add_argument("--module", help="the server module for the *-module clients (default: "
                    "`redis-atomic module path` of --bin)")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache/redis-atomic-peers",
                    help="where the peers are installed (default ~/.cache/redis-atomic-peers)")
    ap.add_argument("--python-mode", choices=["async", "sync"], default="async",
                    help="limits.aio on one event loop (default) or the sync API on threads")
    ap.add_argument("--server-core", type=int, default=0, help="core of redis-server (default 0)")
    ap.add_argument("--client-core", type=int, default=1, help="core of every client (default 1)")
    ap.add_argument("--no-pin", action="store_true", help="no taskset (figures not comparable)")
    ap.add_argument("--json", action="store_true", help="JSON on stdout instead of the table")
    a = ap.parse_args()
    if not (1 <= a.rounds <= 100 and 0 < a.seconds <= 600 and 1 <= a.concurrency <= 1024
            and 1 <= a.identities <= 10**9 and 1 <= a.connections <= 64):
        ap.error("--rounds 1..100, --seconds (0, 600], --concurrency 1..1024, "
                 "--identities 1..10^9, --connections 1..64")
    a.only = a.only or list(CLIENTS)
    return a


def pinning(a):
    """taskset prefixes for the server and the clients."""
    if a.no_pin:
        return [], []
    if not shutil.which("taskset"):
        raise Fail("taskset not found (util-linux), or --no-pin")
    cores = os.sched_getaffinity(0)
    for c in (a.server_core, a.client_core):
        if c not in cores:
            raise Fail(f"core {c} not available to this process (have {sorted(cores)})")
    if a.server_core == a.client_core:
        raise Fail("--server-core and --client-core must differ")
    return (["taskset", "-c", str(a.server_core)], ["taskset", "-c", str(a.client_core)])


def run(a, procs, tmp):
    if not shutil.which("redis-server"):
        raise Fail("redis-server not found (Debian: apt install redis-server)")
    server_pin, client_pin = pinning(a)
    kinds = {CLIENTS[c][0] for c in a.only}
    cli = find_cli(a.bin) if kinds & {"bench", MODULE} else None
    module = find_module(a.module, cli) if MODULE in kinds else None
    if cli and "/debug/" in cli:
        progress(f"{cli} is a debug build: the library's and raw figures are not representative")
    node_dir = prepare_node(procs, a.cache) if NODE in kinds else None
    py = prepare_python(procs, a.cache) if kinds & {PYTHON, PYRA, PYLOCK} else None
    if PYRA in kinds or {"ra-py-lock-sync", "ra-py-lock-async"} & set(a.only):
        prepare_redis_atomic(procs, py)
    go_bin = prepare_go(procs, a.cache) if kinds & {GO, GOLOCK} else None
    if kinds & {JAVA, JAVALOCK}:
        progress("building the Java library and its peers (mvn install, mvn package)")
        procs.run(["mvn", "-B", "-q", "install", "-DskipTests"], 3600, "java build",
                  cwd=ROOT / "bindings/java")
        procs.run(["mvn", "-B", "-q", "package", "dependency:build-classpath",
                   "-Dmdep.outputFile=target/cp.txt"], 3600, "java peers", cwd=JAVA_PEERS)
    load_start = load()
    server = Server(procs, tmp, server_pin)
    module_server = None
    try:
        if module:
            module_dir = Path(tmp) / "module"
            module_dir.mkdir()
            module_server = Server(procs, module_dir, server_pin, ["--loadmodule", module])
            progress(f"redis-server with {module} on 127.0.0.1:{module_server.port}")
        runner = Runner(a, procs, server, client_pin, cli, node_dir, py, go_bin, module_server)
        progress(f"redis-server on 127.0.0.1:{server.port}; clients: {', '.join(a.only)}")
        rates = measure(a, runner)
    finally:
        server.stop()
        if module_server:
            module_server.stop()
    versions = {"redis-server": version_of(["redis-server", "--version"])}
    if module:
        versions["server module"] = module
    if cli:
        versions["redis-atomic"] = f"{version_of([cli, '--version'])} ({cli})"
        versions["redis-rs (Cargo.lock)"] = redis_rs_version()
    if node_dir:
        versions["node"] = version_of(["node", "--version"])
    if py:
        versions["python"] = version_of([str(py), "--version"])
    if go_bin:
        versions["go toolchain"] = version_of(["go", "version"])
    versions.update(runner.versions)
    return {
        "settings": {"rounds": a.rounds, "seconds": a.seconds, "concurrency": a.concurrency,
                     "identities": a.identities, "python_mode": a.python_mode,
                     "bench_connections": runner.bench_connections},
        "pinned": {"redis-server": " ".join(server_pin) or "not pinned",
                   "clients": " ".join(client_pin) or "not pinned",
                   "cores": os.cpu_count()},
        "versions": versions,
        "load_start": load_start,
        "load_end": load(),
        "rows": summarize(rates),
        "client_cpu_us": {c: statistics.median(v) for c, v in runner.client_cpu.items()},
    }


def main():
    a = parse()
    procs = Procs()
    # SIGTERM unwinds like Ctrl-C, through the finally blocks that stop every process.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        with tempfile.TemporaryDirectory(prefix="peer-bench-") as tmp:
            report = run(a, procs, tmp)
    except Fail as e:
        print(f"peer-bench: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("peer-bench: interrupted", file=sys.stderr)
        return 130
    finally:
        procs.stop_all()
    if a.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        write_table(report, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
