#!/usr/bin/env python3
"""A small `redis-atomic serve` client in plain Python (standard library only).

Takes a lock, does "work" fenced by it, releases it; enqueues a job, claims and acks it.

    redis-atomic serve &          # prints http://127.0.0.1:7379
    python3 serve_client.py http://127.0.0.1:7379 [TOKEN]
"""
import json
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:7379"
TOKEN = sys.argv[2] if len(sys.argv) > 2 else None


def post(path, body):
    headers = {"Content-Type": "application/json"}
    if TOKEN:
        headers["Authorization"] = f"Bearer {TOKEN}"
    req = urllib.request.Request(BASE + path, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:  # 409/429 are answers, problems are errors
        if e.headers.get("Content-Type") == "application/problem+json":
            raise SystemExit(f"{path}: {json.loads(e.read())['detail']}")
        return e.code, json.loads(e.read())


status, lock = post("/v1/locks/py-example/acquire", {"ttl_ms": 10000})
if status == 409:
    raise SystemExit(f"held; retry in {lock['retry_after_ms']} ms")
print(f"locked with fence {lock['fence']}")  # pass the fence to every write the lock protects
status, _ = post("/v1/locks/py-example/release", {"token": lock["token"], "fence": lock["fence"]})
assert status == 200

post("/v1/queues/py-example/jobs", {"id": "email-1", "payload": "hello"})
_, claimed = post("/v1/queues/py-example/claim", {"worker": "py", "visibility_ms": 30000})
for job in claimed["jobs"]:
    print(f"working on {job['id']}: {job['payload']}")
    status, _ = post(f"/v1/queues/py-example/jobs/{job['id']}/ack", {"worker": "py", "fence": job["fence"]})
    assert status == 200
print("ok")
