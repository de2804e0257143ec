"""The example service (examples/python/service.py) answers as its docstring says."""

from __future__ import annotations

import importlib.util
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Iterator

import pytest

import redis_atomic as ra

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "python" / "service.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_service", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def service(redis_url: str) -> Iterator[str]:
    # The example's policy with a slow refill (one unit per hour): no refill during the test.
    policy = ra.Policy(
        [
            ra.Limit.gcra(10, 36_000, name="per-second"),
            ra.Limit.fixed_window(1000, 86_400, name="per-day"),
        ]
    )
    server = load_example().make_server(redis_url, policy=policy)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def get(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], dict[str, object]]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def test_rate_limited_endpoint(service: str) -> None:
    """10 requests of one key pass the GCRA (burst 10), the 11th gets 429 with Retry-After; a
    resend with the same Idempotency-Key is replayed, not charged."""
    url = f"{service}/api/hello"
    statuses = [get(url, {"X-Api-Key": "k1"})[0] for _ in range(11)]
    assert statuses == [200] * 10 + [429]
    status, headers, _ = get(url, {"X-Api-Key": "k1"})
    assert status == 429 and int(headers["Retry-After"]) >= 1
    status, headers, body = get(url, {"X-Api-Key": "k2", "Idempotency-Key": "r1"})
    assert status == 200 and body["replayed"] is False and '"per-second";r=9' in headers["RateLimit"]
    status, headers, body = get(url, {"X-Api-Key": "k2", "Idempotency-Key": "r1"})
    assert status == 200 and body["replayed"] is True
    assert get(url, {})[0] == 401
