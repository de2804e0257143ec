#!/usr/bin/env python3
"""The peer table of docs/verify.md: the libraries people use instead of redis-atomic, each
through `redis-atomic verify --driver` (tools/peers/drivers), under the same faults as ours,
judged only by the invariant each documents (the drivers quote it).

    python3 tools/verify-peers.py [--bin target/debug/redis-atomic] [--seconds 2]
        [--fault conn-kill --fault lost-reply --fault crash --fault stall]
        [--ours target/python-venv/bin/python] [--only redis-py-lock ...]

Prints one table: library × fault → operations, unknown outcomes, availability (refused share,
the longest stretch with no call served), violations; then, for each violation, the history's
first violations as the checker described them (each row's full JSON report is written to
--out, default target/verify-peers/<library>.json). The peers are installed on demand, pinned,
outside the repository (as tools/peer-bench.py installs its peers), under --cache (default
~/.cache/redis-atomic-peers): Python packages into a venv from
tools/peers/drivers/python/requirements.txt, Node packages by `npm ci` from
tools/peers/drivers/node/package-lock.json, the Go driver by `go build` (tools/peers/drivers/go,
pinned by its go.sum), the Java driver by `mvn -q package` of a copy of tools/peers/drivers/java
(pinned by its pom.xml). Needs redis-server, python3 with venv, node + npm, go, Java 17 + Maven.

Exit codes: 0 the table was made (violations in a peer are findings, not failures); 1 a row of
ours found a violation; 2 usage, an install that failed, or a run that did not report.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

sys.dont_write_bytecode = True
ROOT = Path(__file__).resolve().parent.parent
DRIVERS = ROOT / "tools/peers/drivers"

# library: (runtime, driver argument, row, version source)
PEERS = {
    "redis-py-lock": ("python", "redis-py-lock", "mutex", "redis"),
    "redis-py-alock": ("python", "redis-py-alock", "mutex", "redis"),
    "python-redis-lock": ("python", "python-redis-lock", "mutex", "python-redis-lock"),
    "node-redlock": ("node", "redlock", "mutex", "redlock"),
    "limits-moving": ("python", "limits-moving", "ratelimit-sl", "limits"),
    "limits-fixed": ("python", "limits-fixed", "ratelimit-win", "limits"),
    "limits-sliding": ("python", "limits-sliding", "ratelimit-win", "limits"),
    "rate-limiter-flexible": ("node", "rlf", "ratelimit-win", "rate-limiter-flexible"),
    "redsync": ("go", "redsync", "mutex", "github.com/go-redsync/redsync/v4"),
    "redis_rate": ("go", "redis_rate", "ratelimit-win", "github.com/go-redis/redis_rate/v10"),
    "bullmq": ("node", "bullmq", "queue-alo", "bullmq"),
    "redisson-lock": ("java", "redisson-lock", "mutex", "redisson"),
    "redisson-fenced-lock": ("java", "redisson-fenced-lock", "lock", "redisson"),
    "redisson-ratelimiter": ("java", "redisson-ratelimiter", "ratelimit-sl", "redisson"),
    "redisson-semaphore": ("java", "redisson-semaphore", "semaphore", "redisson"),
    "bucket4j": ("java", "bucket4j", "ratelimit-win", "bucket4j_jdk17-lettuce"),
}
# A JVM of the Java driver: 4 run side by side on a small machine (no effect on what is judged).
JVM = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx256m"
OURS = ["lock", "quota", "queue", "ratelimit-sl", "ratelimit-win", "semaphore"]


def run(cmd: list[str], **kw: object) -> None:
    if subprocess.run(cmd, **kw).returncode != 0:  # type: ignore[call-overload]
        sys.exit(f"failed: {' '.join(cmd)}")


def prepare_python(cache: Path) -> Path:
    d = cache / "verify-python"
    reqs = DRIVERS / "python/requirements.txt"
    stamp = d / "requirements.txt"
    if not stamp.exists() or stamp.read_text() != reqs.read_text():
        print(f"installing the Python peers into {d}", file=sys.stderr)
        shutil.rmtree(d, ignore_errors=True)
        run([sys.executable, "-m", "venv", str(d)])
        run([str(d / "bin/pip"), "install", "-q", "-r", str(reqs)])
        shutil.copy(reqs, stamp)
    for f in (ROOT / "tools/drivers/protocol.py", DRIVERS / "python/driver.py"):
        shutil.copy(f, d)
    return d


def prepare_node(cache: Path) -> Path:
    d = cache / "verify-node"
    lock = DRIVERS / "node/package-lock.json"
    d.mkdir(parents=True, exist_ok=True)
    stamp = d / "installed-lock.json"
    if not stamp.exists() or stamp.read_text() != lock.read_text():
        print(f"installing the Node peers into {d} (npm ci)", file=sys.stderr)
        for f in ("package.json", "package-lock.json"):
            shutil.copy(DRIVERS / "node" / f, d)
        run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=d)
        shutil.copy(lock, stamp)
    for mjs in (DRIVERS / "node").glob("*.mjs"):
        shutil.copy(mjs, d)
    return d


def prepare_go(cache: Path) -> Path:
    """`go build` of the Go peers' driver (modules pinned by go.mod / go.sum) into cache/verify-go."""
    d = cache / "verify-go"
    d.mkdir(parents=True, exist_ok=True)
    run(["go", "build", "-mod=readonly", "-o", str(d / "driver"), "."], cwd=DRIVERS / "go")
    return d


def prepare_java(cache: Path) -> Path:
    """`mvn -q package` of a copy of the Java peers' driver (tools/peers/drivers/java, versions
    pinned by its pom.xml) into cache/verify-java, its classpath written to classpath.txt."""
    d = cache / "verify-java"
    shutil.rmtree(d / "src", ignore_errors=True)
    shutil.copytree(DRIVERS / "java/src", d / "src")
    shutil.copy(DRIVERS / "java/pom.xml", d)
    run(["mvn", "-q", "package", "dependency:build-classpath", "-Dmdep.outputFile=classpath.txt"], cwd=d)
    return d


def version(runtime: str, env: Path, package: str) -> str:
    if runtime == "java":
        after = (DRIVERS / "java/pom.xml").read_text().split(f"<artifactId>{package}</artifactId>", 1)[1]
        return f"{package} {after.split('<version>', 1)[1].split('<', 1)[0]}"
    if runtime == "go":
        pinned = (DRIVERS / "go/go.mod").read_text().split(package + " ", 1)[1].split()[0]
        return f"{package.split('/')[2]} {pinned}"
    if runtime == "node":
        meta = json.loads((env / "node_modules" / package / "package.json").read_text())
        return f"{package} {meta['version']}"
    out = subprocess.run([str(env / "bin/python"), "-c",
                          f"import importlib.metadata as m; print(m.version('{package}'))"],
                         capture_output=True, text=True)
    return f"{package} {out.stdout.strip()}"


def verify(binary: str, driver: str, rows: list[str], a: argparse.Namespace) -> dict[str, Any]:
    cmd = [binary, "verify", "--driver", driver, "--json", "--seconds", str(a.seconds)]
    for f in a.fault:
        cmd += ["--fault", f]
    for r in rows:
        cmd += ["--only", r]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode not in (0, 1) or not out.stdout.strip():
        sys.exit(f"verify did not report ({out.returncode}): {out.stderr[-2000:]}")
    return cast(dict[str, Any], json.loads(out.stdout))


def table(results: list[tuple[str, str, dict[str, Any]]]) -> None:
    print(f"{'library':<24} {'version':<28} {'row':<14} {'fault':<11} {'ops':>7} {'unknown':>7}"
          f" {'refused%':>8} {'unserved ms':>11} {'violations':>10}")
    for lib, ver, report in results:
        for c in report["checks"]:
            a = c["availability"]
            status = c["violations"] if c["status"] in ("ok", "violations") else c["status"].upper()
            print(f"{lib:<24} {ver:<28} {c['primitive']:<14} {c['fault']:<11} {c['operations']:>7}"
                  f" {c['unknown']:>7} {a['refused_share'] * 100:>7.1f}% {a['longest_unserved_ms']:>11}"
                  f" {status:>10}")
    for lib, _, report in results:
        for c in report["checks"]:
            for e in c.get("examples", []):
                print(f"  {lib} {c['primitive']} ({c['fault']}): {e}")
            if c.get("error"):
                print(f"  {lib} {c['primitive']} ({c['fault']}): {c['status']}: {c['error']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target/debug/redis-atomic"))
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--fault", action="append")
    ap.add_argument("--only", action="append", choices=sorted(PEERS))
    ap.add_argument("--ours", help="the Python with redis_atomic installed: our rows in the same table")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache/redis-atomic-peers")
    ap.add_argument("--out", type=Path, default=ROOT / "target/verify-peers")
    a = ap.parse_args()
    a.fault = a.fault or ["conn-kill", "lost-reply", "crash", "stall"]
    peers = a.only or list(PEERS)
    envs = {}
    if any(PEERS[p][0] == "python" for p in peers):
        envs["python"] = prepare_python(a.cache)
    if any(PEERS[p][0] == "node" for p in peers):
        envs["node"] = prepare_node(a.cache)
    if any(PEERS[p][0] == "go" for p in peers):
        envs["go"] = prepare_go(a.cache)
    if any(PEERS[p][0] == "java" for p in peers):
        envs["java"] = prepare_java(a.cache)
    a.out.mkdir(parents=True, exist_ok=True)
    results = []
    started = time.monotonic()
    for lib in peers:
        runtime, arg, row, package = PEERS[lib]
        env = envs[runtime]
        driver = {
            "node": f"node {env}/driver.mjs {arg}",
            "python": f"{env}/bin/python {env}/driver.py {arg}",
            "go": f"{env}/driver {arg}",
            "java": f"java {JVM} -cp {env}/target/classes:$(cat {env}/classpath.txt) peers.driver.Driver {arg}",
        }[runtime]
        report = verify(a.bin, driver, [row], a)
        (a.out / f"{lib}.json").write_text(json.dumps(report, indent=1))
        results.append((lib, version(runtime, env, package), report))
    ours_failed = False
    if a.ours:
        driver = f"{a.ours} {ROOT}/tools/drivers/python_face.py"
        report = verify(a.bin, driver, OURS, a)
        (a.out / "redis-atomic-python.json").write_text(json.dumps(report, indent=1))
        results.append(("redis-atomic (Python)", "redis_atomic 0.1.0", report))
        ours_failed = not report["ok"]
    table(results)
    print(f"{len(a.fault)} faults + clean, {a.seconds} s per cell, {time.monotonic() - started:.0f} s in all")
    return 1 if ours_failed else 0


if __name__ == "__main__":
    sys.exit(main())
