#!/usr/bin/env python3
"""A client we did not write (Python's urllib + threading) against `redis-atomic proxy` in front
of proxy_upstream.py. Usage: proxy_client.py PROXY_URL UPSTREAM_URL

Each check races duplicates through the proxy and then asks the upstream how often each key
really ran: the side effect is counted where it happens, not inferred from the answers.
Exits 0 when every check holds; otherwise prints what failed and exits 1.
"""

import json
import sys
import threading
import urllib.error
import urllib.request

PROXY, UPSTREAM = sys.argv[1], sys.argv[2]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


def call(method, path, body=None, key=None, who=None, base=None):
    """One request: (status, lower-cased headers, body bytes), for any status."""
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Idempotency-Key"] = key
    if who is not None:
        headers["Authorization"] = "Bearer " + who
    data = body.encode() if body is not None else None
    req = urllib.request.Request((base or PROXY) + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def race(requests):
    """Runs every (method, path, body, key, who) at once (a barrier releases them together)."""
    results = [None] * len(requests)
    barrier = threading.Barrier(len(requests))

    def run(i, args):
        barrier.wait()
        results[i] = call(*args)

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(requests)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def upstream_state():
    return json.loads(call("GET", "/_state", base=UPSTREAM)[2])


def slot(who, key):
    return "Bearer " + who + "|" + key


def judge_key(name, answers, expect_status):
    """One key's answers: one original, the rest identical replays or 409 + Retry-After."""
    ok = [a for a in answers if a[0] == expect_status]
    originals = [a for a in ok if a[1].get("idempotent-replayed") != "true"]
    check(len(originals) == 1, f"{name}: one original answer, got {len(originals)}")
    check(len({a[2] for a in ok}) == 1, f"{name}: every {expect_status} byte-identical")
    for status, headers, body in answers:
        if status == 409:
            check("retry-after" in headers, f"{name}: 409 carries Retry-After")
        elif status != expect_status:
            check(False, f"{name}: unexpected {status} {body[:200]!r}")
    return ok[0][2] if ok else None


def concurrent_duplicates():
    keys = [f"order-{i}" for i in range(10)]
    sent = [k for k in keys for _ in range(6)]
    answers = race([("POST", "/orders", '{"amount": 5}', k, "alice") for k in sent])
    firsts = {}
    for k in keys:
        firsts[k] = judge_key(k, [a for a, s in zip(answers, sent) if s == k], 201)
    for k in keys:
        status, headers, body = call("POST", "/orders", '{"amount": 5}', k, "alice")
        check(status == 201 and headers.get("idempotent-replayed") == "true", f"{k}: later replay")
        check(body == firsts[k], f"{k}: replay byte-identical")
    state = upstream_state()
    for k in keys:
        check(state["per_key"].get(slot("alice", k)) == 1, f"{k}: executed once upstream")
        gens = state["generations"].get(slot("alice", k), [])
        check(len(gens) == 1 and gens[0] and gens[0].isdigit(), f"{k}: generation header {gens}")


def in_flight_duplicates():
    answers = race([("POST", "/slow", "{}", "slow-1", "alice")] * 8)
    first = judge_key("slow-1", answers, 201)
    check(any(a[0] == 409 for a in answers), "slow-1: an in-flight duplicate got 409")
    status, headers, body = call("POST", "/slow", "{}", "slow-1", "alice")
    check((status, body) == (201, first), "slow-1: replay after completion")
    check(headers.get("idempotent-replayed") == "true", "slow-1: replay marked")
    check(upstream_state()["per_key"].get(slot("alice", "slow-1")) == 1, "slow-1: executed once")


def mismatch_and_failure():
    check(call("POST", "/orders", '{"a": 1}', "m-1", "alice")[0] == 201, "m-1 first")
    status, headers, _ = call("POST", "/orders", '{"a": 2}', "m-1", "alice")
    check(status == 422, f"m-1: same key, different body → 422, got {status}")
    check(call("POST", "/fail", "{}", "f-1", "alice")[0] == 500, "f-1: 500")
    check(call("POST", "/fail", "{}", "f-1", "alice")[0] == 500, "f-1: retried")
    state = upstream_state()
    check(state["per_key"].get(slot("alice", "m-1")) == 1, "m-1: executed once")
    check(state["per_key"].get(slot("alice", "f-1")) == 2, "f-1: a 500 is not stored")
    status, _, _ = call("POST", "/orders", "{}", None, "alice")
    check(status == 400, f"required key missing → 400, got {status}")


def credentials_are_independent():
    a = call("POST", "/orders", "{}", "shared", "alice")
    b = call("POST", "/orders", "{}", "shared", "bob")
    check(a[0] == 201 and b[0] == 201 and a[2] != b[2], "two credentials, two executions")
    check(call("POST", "/orders", "{}", "shared", "bob")[2] == b[2], "bob replays his own")
    state = upstream_state()
    check(state["per_key"].get(slot("alice", "shared")) == 1, "alice's shared once")
    check(state["per_key"].get(slot("bob", "shared")) == 1, "bob's shared once")


def rate_limited_route():
    answers = race([("GET", "/limited", None, None, "carol")] * 12)
    admitted = [a for a in answers if a[0] == 200]
    refused = [a for a in answers if a[0] == 429]
    check(len(admitted) == 5 and len(refused) == 7, f"5 admitted, 7 refused: {[a[0] for a in answers]}")
    for _, headers, _ in refused:
        check(all(h in headers for h in ("retry-after", "ratelimit", "ratelimit-policy")), f"429 headers {headers}")
    check(all("ratelimit" in h for _, h, _ in admitted), "admitted answers carry RateLimit")
    check(call("GET", "/limited", None, None, "dave")[0] == 200, "another credential has its own quota")
    check(upstream_state()["limited"] == 6, "the upstream saw only the admitted requests")


for step in (concurrent_duplicates, in_flight_duplicates, mismatch_and_failure,
             credentials_are_independent, rate_limited_route):
    print("---", step.__name__, flush=True)
    step()

print(f"{len(FAILURES)} failures", flush=True)
sys.exit(1 if FAILURES else 0)
