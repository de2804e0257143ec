#!/usr/bin/env python3
"""The HTTP contract of `redis-atomic serve`, proved with tools we did not write.

For each config (no auth; bearer tokens), against a real `redis-atomic serve` on an embedded
redis-server:

1. `/openapi.json` passes `openapi-spec-validator`;
2. `schemathesis` (property-based, stateless checks, fixed seed, bounded examples) finds no
   disagreement between the document and the server, and no 5xx;
3. (no-auth config) `openapi-python-client` generates a client from the document with no
   warning, and the generated client runs a lock cycle and rate-limit consumes against the
   server (`client_cycle.py`).

Exit 0 when every step passed; the last line is `N passed, 0 failed`.

usage: contract.py REDIS_ATOMIC_BIN OUT_DIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = sys.argv[1]
OUT = Path(sys.argv[2]).resolve()
VENV_BIN = Path(sys.executable).parent
TOKEN = "contract-token-0123456789"

# The policies the tester charges: large enough that fuzzing rarely runs one dry (a 429 is an
# accepted answer anyway), small bursts so the per-policy `cost` maximum is exercised.
POLICIES = """
[limits.api]
limits = [ { algorithm = "gcra", limit = 100000, period_ms = 1000, burst = 50 } ]
[limits.login-v2]
limits = [ { algorithm = "fixed-window", limit = 3, period_ms = 60000 },
           { algorithm = "sliding-window", limit = 1000, period_ms = 3600000, name = "hourly" } ]
"""
AUTH = f'\n[auth]\ntokens = {{ "{TOKEN}" = "tenant-a" }}\n'
# Each config: its TOML, the schemathesis phases and examples per operation it runs. The open
# server gets the whole run (every boundary case of the coverage phase, then fuzzing); the one
# with tokens differs only by the bearer scheme and the 401s, so a short fuzzing run (with the
# `ignored_auth` check) covers what it adds. `OPENAPI_MAX_EXAMPLES` scales both for a longer
# local run.
SCALE = int(os.environ.get("OPENAPI_MAX_EXAMPLES", "15"))
CONFIGS = {
    "open": (POLICIES, "examples,coverage,fuzzing", SCALE),
    "tokens": (POLICIES + AUTH, "fuzzing", max(1, SCALE // 3)),
}
# Every stateless check the pinned schemathesis offers (not those that follow links between
# operations, nor `object_level_authorization`, which needs two users' credentials).
CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    # hooks.py's: the only 422 a valid request may get is `begin`'s fingerprint mismatch.
    "valid_requests_pass_validation",
]
SEED = "20240611"

results = []


def step(name, ok, detail=""):
    results.append((name, ok))
    print(f"--- {'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


class Serve:
    """`redis-atomic serve --listen 127.0.0.1:0 --config FILE` (embedded redis-server)."""

    def __init__(self, name, config):
        self.config = OUT / f"{name}.toml"
        self.config.write_text(config)
        self.proc = subprocess.Popen(
            [BIN, "serve", "--listen", "127.0.0.1:0", "--config", str(self.config)],
            stdout=subprocess.PIPE,
            stderr=open(OUT / f"{name}.serve.log", "w"),
            text=True,
        )
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://127.0.0.1:"):
            self.proc.kill()
            raise SystemExit(f"serve did not start (first line {self.url!r}): see {name}.serve.log")

    def stop(self):
        """SIGTERM, then the exit code (0: a graceful stop)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def fetch_document(serve, name):
    with urllib.request.urlopen(serve.url + "/openapi.json", timeout=30) as r:
        doc = json.loads(r.read())
    path = OUT / f"{name}.openapi.json"
    path.write_text(json.dumps(doc, indent=1))
    return doc, path


def validate(doc, name):
    from openapi_spec_validator import validate as check

    try:
        check(doc)
        step(f"{name}: openapi-spec-validator", True, "no errors")
    except Exception as e:  # the validator's own error, printed whole
        step(f"{name}: openapi-spec-validator", False, str(e)[:2000])
    ids = [op["operationId"] for item in doc["paths"].values() for op in item.values()]
    step(f"{name}: operationIds unique", len(ids) == len(set(ids)), f"{len(ids)} operations")


def schemathesis(serve, name, doc_path, phases, examples):
    args = [
        str(VENV_BIN / "st"),
        "--config-file", str(HERE / "schemathesis.toml"),
        "run", str(doc_path), "--url", serve.url,
        "--checks", ",".join(CHECKS + (["ignored_auth"] if name == "tokens" else [])),
        "--phases", phases,
        "--max-examples", str(examples),
        "--seed", SEED,
        # No example database: a run depends on the seed alone, never on what an earlier one
        # found (and writes nothing to the working directory).
        "--generation-database", "none",
        # One worker: with two threads, CPython 3.11's `ast` can raise a spurious "AST
        # constructor recursion depth mismatch" (hypothesis parses lambdas' source to name them).
        "--workers", "1",
        "--no-color",
        "--report", "junit",
        "--report-junit-path", str(OUT / f"{name}.junit.xml"),
    ]
    if name == "tokens":
        args += ["--header", f"Authorization: Bearer {TOKEN}"]
    started = time.monotonic()
    # hooks.py: the check above, and the filter of cases whose path the client alters.
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "hooks", "PYTHONPATH": str(HERE)}
    run = subprocess.run(args, capture_output=True, text=True, env=env, cwd=OUT)
    took = time.monotonic() - started
    (OUT / f"{name}.schemathesis.txt").write_text(run.stdout + run.stderr)
    summary = [l for l in run.stdout.splitlines() if l.strip()][-16:]
    print("\n".join("    " + l for l in summary))
    step(f"{name}: schemathesis", run.returncode == 0, f"{took:.1f} s, see {name}.schemathesis.txt")


def generated_client(serve, doc_path):
    out = OUT / "redis_atomic_serve_client"
    # Its post-generation hook (ruff, a dependency of the generator) comes from the same venv.
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    gen = subprocess.run(
        [str(VENV_BIN / "openapi-python-client"), "generate", "--path", str(doc_path),
         "--output-path", str(out), "--meta", "none", "--overwrite", "--fail-on-warning"],
        capture_output=True, text=True, env=env,
    )
    (OUT / "client.generate.txt").write_text(gen.stdout + gen.stderr)
    step("openapi-python-client generate (no warnings)", gen.returncode == 0,
         (gen.stdout + gen.stderr).strip()[-2000:] if gen.returncode else "")
    if gen.returncode:
        return
    use = subprocess.run(
        [sys.executable, str(HERE / "client_cycle.py"), serve.url, str(OUT)],
        capture_output=True, text=True,
    )
    print("\n".join("    " + l for l in (use.stdout + use.stderr).strip().splitlines()))
    step("generated client: lock cycle and consumes", use.returncode == 0)


def main():
    # A fresh directory: nothing an earlier run left (caches included) shapes this one.
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    for name, (config, phases, examples) in CONFIGS.items():
        serve = Serve(name, config)
        try:
            doc, path = fetch_document(serve, name)
            validate(doc, name)
            schemathesis(serve, name, path, phases, examples)
            if name == "open":
                generated_client(serve, path)
        finally:
            code = serve.stop()
        step(f"{name}: serve exits 0 on SIGTERM", code == 0, f"exit {code}")
    failed = sum(1 for _, ok in results if not ok)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
