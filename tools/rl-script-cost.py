#!/usr/bin/env python3
"""Server cost per decision of the rate-limit and lock scripts against the classic scripts.

Why: our scripts' server time should stay within what the classic scripts people write by hand
cost on the same machine: the sorted-set sliding log, the widely copied float GCRA, float token
bucket and two-counter sliding window (all on server TIME), the INCR + EXPIRE fixed window, and
the fenced SET NX PX + INCR lock acquire (docs/performance.md, "The classic scripts", lists them
and what each does unlike ours). Absolute µs on a shared VM drift a lot within an hour (the
figures and their spread: docs/performance.md), so every run measures ours and the classics on
the same server, in shuffled order, each run on an empty database, and reports medians.

    tools/rl-script-cost.py [--rounds 20] [--requests 20000] [--identities 1000000]
    tools/rl-script-cost.py --instructions     # valgrind: instructions per call, deterministic
    tools/rl-script-cost.py --pin              # server and client on separate cores (taskset)

µs: `usec_per_call` of EVALSHA (INFO commandstats) under `redis-benchmark -c 8`, one random
identity per call out of --identities (10^6: practically every decision is a new identity's
first; 100: every identity holds state). Every decision is an admission (limits never reached).
The lock cases (two keys, lock and fence, each with its own random number) always draw from
2^31 resources whatever --identities says, so every call acquires a free lock.
--instructions runs redis-server under callgrind and counts instructions inside evalShaCommand.
Needs redis-server, redis-cli, redis-benchmark (Debian: redis-server, redis-tools) and the built
CLI (`target/release/redis-atomic` or `target/debug/redis-atomic`, or --bin) for our sources.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLASSIC = ROOT / "crates/redis-atomic-cli/src/cmd/bench/classic"

# name -> (source, key prefix or list of prefixes, args). Our limiters: one key, cost limit
# period_us burst test_now (""); the anchored window: cost limit period_ms. Classic token
# bucket: capacity rate_per_s; classic sliding
# window: window_ms limit. Locks: keys lock fence, args token ttl_ms.
CASES = {
    "classic sliding log": ("file:sliding_log.lua", "cl", ["100", "10000"]),
    "rl_sliding_log": ("ours:rl_sliding_log", "sl", ["1", "10000", "100000", "10000", ""]),
    "classic gcra": ("file:gcra.lua", "cg", ["1000", "1", "1000"]),
    "rl_gcra": ("ours:rl_gcra", "g", ["1", "1000", "1000000", "1000", ""]),
    "classic fixed window": ("file:fixed_window.lua", "cf", ["60", "100000"]),
    "rl_fixed_window": ("ours:rl_fixed_window", "fw", ["1", "100000", "60000000", "100000", ""]),
    "rl_anchored_window": ("ours:rl_anchored_window", "aw", ["1", "100000", "60000"]),
    "classic token bucket": ("file:token_bucket.lua", "ct", ["1000", "1000"]),
    "rl_token_bucket": ("ours:rl_token_bucket", "tb", ["1", "1000", "1000000", "1000", ""]),
    "classic sliding window": ("file:sliding_window.lua", "cs", ["60000", "100000"]),
    "rl_sliding_window": ("ours:rl_sliding_window", "sw", ["1", "100000", "60000000", "100000", ""]),
    "classic fenced acquire": ("file:fenced_acquire.lua", ["ck", "ckf"], ["token-1", "30000"]),
    "lock_acquire": ("ours:lock_acquire", ["lk", "lkf"], ["token-1", "30000"]),
}
# Lock cases: resources drawn from 2^31 (redis-benchmark's random() range), never --identities.
FRESH = {"classic fenced acquire", "lock_acquire"}
FRESH_IDENTITIES = 2**31 - 1


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def source(spec, cli):
    kind, name = spec.split(":", 1)
    if kind == "file":
        return (CLASSIC / name).read_text()
    return run([cli, "scripts", "show", name])


def find_cli(explicit):
    for c in [explicit, ROOT / "target/release/redis-atomic", ROOT / "target/debug/redis-atomic"]:
        if c and Path(c).exists():
            return str(c)
    sys.exit("rl-script-cost: build the CLI first (cargo build -p redis-atomic-cli) or pass --bin")


class Server:
    """A private redis-server on a unix socket, optionally under callgrind."""

    def __init__(self, tmp, instructions, pin=False):
        # --pin: the server on core 0, redis-benchmark on core 1 (taskset), so the two never
        # share a core and the server's time is not the client's.
        self.client_prefix = ["taskset", "-c", "1"] if pin else []
        self.sock = os.path.join(tmp, "redis.sock")
        self.out = os.path.join(tmp, "callgrind.out")
        cmd = ["redis-server", "--port", "0", "--unixsocket", self.sock, "--save", "",
               "--appendonly", "no", "--dir", tmp]
        if instructions:
            cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=evalShaCommand",
                   f"--callgrind-out-file={self.out}"] + cmd
        if pin:
            cmd = ["taskset", "-c", "0"] + cmd
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(self.sock) and self.cli("PING").strip() == "PONG":
                return
            time.sleep(0.1)
        sys.exit("rl-script-cost: redis-server did not start")

    def cli(self, *args, stdin=None):
        return subprocess.run(["redis-cli", "-s", self.sock, *args], input=stdin,
                              capture_output=True, text=True).stdout

    def bench(self, sha, case, n, identities):
        _, prefixes, args = CASES[case]
        prefixes = [prefixes] if isinstance(prefixes, str) else prefixes
        keys = [p + ":{__rand_int__}" for p in prefixes]
        space = FRESH_IDENTITIES if case in FRESH else identities
        cmd = self.client_prefix + ["redis-benchmark", "-s", self.sock, "-q", "-n", str(n), "-c", "8",
               "-r", str(space), "EVALSHA", sha, str(len(keys)), *keys, *args]
        subprocess.run(cmd, check=True, capture_output=True)

    def check_acquired(self, case, n):
        """A lock case: every call took a free lock (its lock keys, but for a rare repeat of one
        of 2^31 resources). The scripts answer nil or 'held' without failing, so count."""
        if case not in FRESH:
            return
        prefix = CASES[case][1][0]
        locks = len(self.cli("--scan", "--pattern", prefix + ":*").split())
        if locks < n - max(2, n // 1000):
            sys.exit(f"rl-script-cost: {case}: {locks} locks after {n} acquires")

    def evalsha_stats(self):
        line = next(l for l in self.cli("INFO", "commandstats").splitlines()
                    if l.startswith("cmdstat_evalsha:"))
        fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
        return float(fields["usec_per_call"]), int(fields.get("failed_calls", 0))

    def instructions(self):
        """Instructions since the last zeroing (callgrind dump, then its totals line)."""
        before = set(Path(self.out).parent.glob("callgrind.out*"))
        run(["callgrind_control", "-d", str(self.proc.pid)])
        for _ in range(100):
            new = set(Path(self.out).parent.glob("callgrind.out*")) - before
            if new:
                time.sleep(0.2)
                text = max(new, key=lambda p: p.stat().st_mtime).read_text()
                return next(int(l.split()[1]) for l in text.splitlines()
                            if l.startswith(("summary:", "totals:")))
            time.sleep(0.1)
        sys.exit("rl-script-cost: callgrind wrote no dump")

    def stop(self):
        self.cli("SHUTDOWN", "NOSAVE")
        self.proc.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--requests", type=int, default=20000, help="calls per script per round")
    ap.add_argument("--identities", type=int, default=1000000)
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--only", action="append", choices=sorted(CASES))
    ap.add_argument("--pin", action="store_true",
                    help="server on core 0, client on core 1 (taskset)")
    ap.add_argument("--bin", help="redis-atomic CLI binary (for our script sources)")
    a = ap.parse_args()
    if a.instructions and not shutil.which("valgrind"):
        sys.exit("rl-script-cost: --instructions needs valgrind")
    cli = find_cli(a.bin)
    names = a.only or list(CASES)
    with tempfile.TemporaryDirectory(prefix="rl-cost-") as tmp:
        srv = Server(tmp, a.instructions, a.pin)
        try:
            shas = {n: srv.cli("-x", "SCRIPT", "LOAD", stdin=source(CASES[n][0], cli)).strip()
                    for n in names}
            if a.instructions:
                measure_instructions(srv, names, shas, a)
            else:
                measure_usec(srv, names, shas, a)
        finally:
            srv.stop()


def measure_usec(srv, names, shas, a):
    results = {n: [] for n in names}
    for r in range(a.rounds):
        for n in random.sample(names, len(names)):
            srv.cli("FLUSHALL", "SYNC")
            srv.cli("CONFIG", "RESETSTAT")
            srv.bench(shas[n], n, a.requests, a.identities)
            srv.check_acquired(n, a.requests)
            usec, failed = srv.evalsha_stats()
            if failed:
                sys.exit(f"rl-script-cost: {n}: {failed} failed calls")
            results[n].append(usec)
        print(f"round {r + 1}/{a.rounds}", file=sys.stderr, end="\r")
    print(f"server µs per decision: {a.rounds} rounds x {a.requests} calls, "
          f"{a.identities} identities, redis-benchmark -c 8")
    print(f"{'script':22} {'median':>7} {'min':>7} {'max':>7}")
    for n in names:
        v = results[n]
        print(f"{n:22} {statistics.median(v):7.2f} {min(v):7.2f} {max(v):7.2f}")


def measure_instructions(srv, names, shas, a):
    n_calls = min(a.requests, 4000)  # ~50x slower under valgrind
    print(f"instructions per decision inside EVALSHA: {n_calls} calls, {a.identities} identities")
    for n in names:
        srv.cli("FLUSHALL", "SYNC")
        srv.bench(shas[n], n, 200, a.identities)  # warm
        run(["callgrind_control", "-z", str(srv.proc.pid)])
        srv.cli("CONFIG", "RESETSTAT")
        srv.bench(shas[n], n, n_calls, a.identities)
        _, failed = srv.evalsha_stats()
        if failed:
            sys.exit(f"rl-script-cost: {n}: {failed} failed calls")
        print(f"{n:22} {srv.instructions() // n_calls:>8}")


if __name__ == "__main__":
    main()
