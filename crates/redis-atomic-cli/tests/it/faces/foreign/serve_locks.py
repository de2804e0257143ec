#!/usr/bin/env python3
"""Foreign-client proof for `redis-atomic serve` locks, Python standard library only.

Many threads race acquire/release on a few resources over HTTP (keep-alive, http.client). While
a thread believes it holds a resource it bumps a shared in-process counter for that resource; a
second holder at the same time is an overlap. Fences must strictly increase per resource in the
order holders observed them. Exit 0 when no overlap, fences increase and every thread finished.

usage: serve_locks.py URL [THREADS] [ROUNDS]
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

URL = sys.argv[1]
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 12
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 15
RESOURCES = ["py-res-a", "py-res-b", "py-res-c"]
DEADLINE = time.monotonic() + 120

guard = threading.Lock()
inside = {r: 0 for r in RESOURCES}
last_fence = {r: 0 for r in RESOURCES}
problems = []
done = [0]


def connect():
    u = urllib.parse.urlparse(URL)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30)


def post(conn, path, body):
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, json.loads(r.read() or b"null")


def hold(resource, fence):
    with guard:
        inside[resource] += 1
        if inside[resource] > 1:
            problems.append(f"overlap on {resource}")
        if fence <= last_fence[resource]:
            problems.append(f"fence {fence} after {last_fence[resource]} on {resource}")
        last_fence[resource] = fence
    time.sleep(0.001)
    with guard:
        inside[resource] -= 1


def worker(i):
    conn = connect()
    for n in range(ROUNDS):
        resource = RESOURCES[(i + n) % len(RESOURCES)]
        while True:
            if time.monotonic() > DEADLINE:
                problems.append("deadline passed")
                return
            status, body = post(conn, f"/v1/locks/{resource}/acquire", {"ttl_ms": 30000})
            if status == 200:
                break
            if status != 409 or body.get("acquired") is not False:
                problems.append(f"acquire answered {status} {body}")
                return
            time.sleep(0.002)
        hold(resource, body["fence"])
        status, body = post(conn, f"/v1/locks/{resource}/release", {"token": body["token"], "fence": body["fence"]})
        if status != 200 or body != {"released": True}:
            problems.append(f"release answered {status} {body}")
            return
    with guard:
        done[0] += 1


threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if problems or done[0] != THREADS:
    print(f"FAIL: {done[0]}/{THREADS} threads finished; {problems[:5]}", file=sys.stderr)
    sys.exit(1)
print(f"ok: {THREADS * ROUNDS} lock holds, no overlap, fences increasing")
