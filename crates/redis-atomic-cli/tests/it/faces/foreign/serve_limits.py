#!/usr/bin/env python3
"""Foreign-client proof for `redis-atomic serve` rate limits, Python standard library only.

Many threads consume one key of POLICY at once (urllib, a request each); exactly LIMIT must be
admitted (200), every other answer 429 with Retry-After and the IETF RateLimit headers.

usage: serve_limits.py URL POLICY LIMIT [REQUESTS]
"""
import json
import sys
import threading
import urllib.error
import urllib.request

URL, POLICY, LIMIT = sys.argv[1], sys.argv[2], int(sys.argv[3])
REQUESTS = int(sys.argv[4]) if len(sys.argv) > 4 else 4 * LIMIT
KEY = "py-customer"

lock = threading.Lock()
counts = {}
problems = []


def consume():
    req = urllib.request.Request(
        f"{URL}/v1/limits/{POLICY}/consume",
        data=json.dumps({"key": KEY, "cost": 1}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, headers, body = r.status, r.headers, json.loads(r.read())
    except urllib.error.HTTPError as e:
        status, headers, body = e.code, e.headers, json.loads(e.read())
    with lock:
        counts[status] = counts.get(status, 0) + 1
        if "RateLimit" not in headers or "RateLimit-Policy" not in headers:
            problems.append(f"{status} without RateLimit headers")
        if status == 429 and (body.get("allowed") is not False or "Retry-After" not in headers):
            problems.append(f"429 body {body}")
        if status == 200 and body.get("allowed") is not True:
            problems.append(f"200 body {body}")


threads = [threading.Thread(target=consume) for _ in range(REQUESTS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if problems or counts.get(200) != LIMIT or counts.get(429, 0) != REQUESTS - LIMIT:
    print(f"FAIL: {counts}; {problems[:5]}", file=sys.stderr)
    sys.exit(1)
print(f"ok: exactly {LIMIT} of {REQUESTS} concurrent consumes admitted")
