#!/usr/bin/env python3
"""A driver of the verify protocol in plain Python (stdlib only, its own RESP client), to prove
the harness judges a foreign client: correct, it passes the `lock`, `mutex`, `quota`, `queue`,
`queue-alo` and `semaphore` rows under faults; broken on purpose (`--broken=...`), the relevant
row must catch it.

  --broken=release  releases without checking the owner: a lock with a bare DEL, a semaphore's
                    permit with ZPOPMIN (whichever permit ends first); the rows' zombies turn that
                    into one holder too many
  --broken=limit    admits one holder over the semaphore's limit
  --broken=resend   resends `quota.add` (not retry-safe: no request id) after a lost reply and
                    reports the resend's answer (the `quota` row's counter shows the double add)
  --broken=ack      acks a job without checking that the claim is still the job's (the queue
                    rows' zombie, acking after its lease ran out, acks a job twice)
  --broken=slow     not a defect: a slow start-up (2 s before each hello's answer, as a JVM's
                    first connect), which must not spend the row's faults before its calls
  --broken=crash    exits at the first request; --broken=garbage answers a line that is not
                    JSON; --broken=hang never answers (each must become an `error` row)

Standalone servers only (a cluster's hello is answered `unsupported`).
"""

import json
import socket
import sys
import time
from typing import Any

TIMEOUT = 0.2  # seconds: a stall or a dropped reply becomes an unknown outcome
REFUSALS = ("OOM", "LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY")

ACQUIRE = """if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local f = redis.call('incr', KEYS[2]); redis.call('pexpire', KEYS[2], 600000); return f
end
return 0"""
RELEASE = """if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0"""
# A semaphore: a sorted set of holders' tokens, scored by when their lease ends (server µs; a
# lease ends only once that instant has passed, never a truncated millisecond early).
NOW = "local t = redis.call('time'); local now = t[1] * 1000000 + t[2]\n"
SEM_ACQUIRE = NOW + """redis.call('zremrangebyscore', KEYS[1], '-inf', '(' .. now)
if redis.call('zcard', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('zadd', KEYS[1], now + tonumber(ARGV[2]) * 1000, ARGV[3])
  redis.call('pexpire', KEYS[1], 600000)
  return 1
end
return 0"""
SEM_RELEASE = NOW + """local ends = redis.call('zscore', KEYS[1], ARGV[1])
redis.call('zrem', KEYS[1], ARGV[1])
if ends and tonumber(ends) > now then return 1 end
return 0"""
ADD = """local v = tonumber(redis.call('get', KEYS[1]) or '0')
local n = v + tonumber(ARGV[1])
if n < tonumber(ARGV[2]) or n > tonumber(ARGV[3]) then return {0, v} end
redis.call('set', KEYS[1], n, 'PX', ARGV[4])
return {1, n}"""
# The queue: meta (hash: id -> `q`, `r:<worker>:<fence>` or `a`), due (zset), inflight (zset:
# id -> lease deadline, server ms), a fence counter.
ENQUEUE = """if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('hset', KEYS[1], ARGV[1], 'q'); redis.call('zadd', KEYS[2], 0, ARGV[1]); return 1"""
CLAIM = """local t = redis.call('time'); local now = t[1] * 1000 + math.floor(t[2] / 1000)
local ids = redis.call('zrangebyscore', KEYS[3], '-inf', now, 'LIMIT', 0, 1)
if #ids == 0 then ids = redis.call('zrange', KEYS[2], 0, 0) end
if #ids == 0 then return {} end
local id = ids[1]; redis.call('zrem', KEYS[2], id)
local fence = redis.call('incr', KEYS[4])
redis.call('zadd', KEYS[3], now + tonumber(ARGV[2]), id)
redis.call('hset', KEYS[1], id, 'r:' .. ARGV[1] .. ':' .. fence)
return {id, fence}"""
ACK = """if redis.call('hget', KEYS[1], ARGV[1]) ~= 'r:' .. ARGV[2] .. ':' .. ARGV[3] then return 0 end
redis.call('zrem', KEYS[2], ARGV[1]); redis.call('hset', KEYS[1], ARGV[1], 'a'); return 1"""
UNCHECKED_ACK = """redis.call('zrem', KEYS[2], ARGV[1]); redis.call('hset', KEYS[1], ARGV[1], 'a'); return 1"""
STATES = {"q": "queued", "a": "acked"}


class Failed(Exception):
    """A call's error, as a code of the vocabulary table."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class Resp:
    """One connection, dropped on any error (its stream may be out of step)."""

    def __init__(self, host: str, port: int) -> None:
        self.addr = (host, port)
        self.sock: socket.socket | None = None
        self.buf = b""

    def call(self, *args: object) -> object:
        if self.sock is None:
            try:
                self.sock = socket.create_connection(self.addr, timeout=TIMEOUT)
            except OSError:
                raise Failed("connection") from None
            self.buf = b""
        out = b"*%d\r\n" % len(args)
        for a in args:
            b = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(b), b)
        try:
            self.sock.sendall(out)
            return self.read()
        except (OSError, ValueError, IndexError):
            self.close()
            raise Failed("outcome_unknown") from None

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None

    def fill(self, n: int) -> None:
        """Reads until `n` bytes are buffered."""
        while len(self.buf) < n:
            assert self.sock is not None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("closed")
            self.buf += chunk

    def take(self, n: int) -> bytes:
        self.fill(n)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def read(self) -> object:
        while b"\r\n" not in self.buf:
            self.fill(len(self.buf) + 1)
        head, self.buf = self.buf.split(b"\r\n", 1)
        kind, rest = chr(head[0]), head[1:]
        if kind == "-":
            refused = rest.split(b" ", 1)[0].decode() in REFUSALS
            raise Failed("rejected" if refused else "server_error")
        if kind == "+":
            return rest.decode()
        if kind == ":":
            return int(rest)
        n = int(rest)
        if kind == "*":
            return [self.read() for _ in range(n)]
        if kind != "$":
            raise ValueError(f"unexpected reply {head!r}")
        return None if n < 0 else self.take(n + 2)[:-2].decode()


class Driver:
    def __init__(self, broken: str) -> None:
        self.broken = broken
        self.conn: Resp | None = None
        self.ns = ""

    def hello(self, msg: dict[str, Any]) -> dict[str, Any]:
        if msg.get("cluster"):
            return {"driver": "resp_driver.py", "rows": [], "unsupported": "standalone only"}
        host, port = msg["url"].split("//", 1)[1].rsplit(":", 1)
        self.conn = Resp(host, int(port.split("/")[0]))
        self.ns = msg["namespace"]
        rows = ["lock", "mutex", "quota", "queue", "queue-alo", "semaphore"]
        return {"driver": "resp_driver.py", "rows": rows}

    def run(self, op: str, a: dict[str, Any]) -> dict[str, Any]:
        c = self.conn
        assert c is not None
        if op == "lock.acquire":
            key = f"{self.ns}:lock:{a['resource']}"
            fence = c.call("EVAL", ACQUIRE, 2, key, key + ":fence", a["token"], a["ttl_ms"])
            if fence == 0:
                return {"outcome": "held"}
            return {"outcome": "acquired", "fence": fence, "handle": a["token"]}
        if op == "lock.release":
            key = f"{self.ns}:lock:{a['resource']}"
            if self.broken == "release":
                gone = c.call("DEL", key)
            else:
                gone = c.call("EVAL", RELEASE, 1, key, a["handle"])
            return {"outcome": "released" if gone == 1 else "lost"}
        if op.startswith("semaphore."):
            return self.semaphore(c, op, a)
        if op == "quota.add":
            key = f"{self.ns}:quota:{a['name']}"
            args = ("EVAL", ADD, 1, key, a["delta"], a["min"], a["max"], a["ttl_ms"])
            reply = self.resend(c, args) if self.broken == "resend" else c.call(*args)
            assert isinstance(reply, list)
            return {"outcome": "applied" if reply[0] == 1 else "refused", "value": reply[1]}
        if op == "quota.get":
            value = c.call("GET", f"{self.ns}:quota:{a['name']}")
            return {"outcome": "value", "value": int(str(value)) if value is not None else 0}
        if op.startswith("queue."):
            return self.queue(c, op, a)
        return {"error": "bad_argument"}

    def queue(self, c: Resp, op: str, a: dict[str, Any]) -> dict[str, Any]:
        k = f"{self.ns}:queue:{{{a['queue']}}}"
        meta, due, inflight = k + ":meta", k + ":due", k + ":inflight"
        if op == "queue.enqueue":
            added = c.call("EVAL", ENQUEUE, 2, meta, due, a["job_id"])
            return {"outcome": "enqueued" if added == 1 else "exists"}
        if op == "queue.claim":
            got = c.call("EVAL", CLAIM, 4, meta, due, inflight, k + ":fence", a["worker"], a["visibility_ms"])
            assert isinstance(got, list)
            if not got:
                return {"outcome": "empty"}
            return {"outcome": "claimed", "job_id": got[0], "fence": got[1], "handle": got[1]}
        if op == "queue.ack":
            script = UNCHECKED_ACK if self.broken == "ack" else ACK
            acked = c.call("EVAL", script, 2, meta, inflight, a["job_id"], a["worker"], a["handle"])
            return {"outcome": "acked" if acked == 1 else "lost"}
        if op == "queue.inspect":
            state = c.call("HGET", meta, a["job_id"])
            word = "unknown" if state is None else STATES.get(str(state), "running")
            return {"outcome": word}
        return {"error": "bad_argument"}

    def semaphore(self, c: Resp, op: str, a: dict[str, Any]) -> dict[str, Any]:
        key = f"{self.ns}:semaphore:{a['name']}"
        if op == "semaphore.acquire":
            limit = a["limit"] + (1 if self.broken == "limit" else 0)
            got = c.call("EVAL", SEM_ACQUIRE, 1, key, limit, a["ttl_ms"], a["token"])
            return {"outcome": "acquired", "handle": a["token"]} if got == 1 else {"outcome": "full"}
        if self.broken == "release":
            gone = 1 if c.call("ZPOPMIN", key) else 0
        else:
            gone = c.call("EVAL", SEM_RELEASE, 1, key, a["token"])
        return {"outcome": "released" if gone == 1 else "lost"}

    @staticmethod
    def resend(c: Resp, args: tuple[object, ...]) -> object:
        """The defect: a lost reply is answered by sending the same (not retry-safe) call again."""
        for _ in range(20):
            try:
                return c.call(*args)
            except Failed as e:
                if e.code not in ("outcome_unknown", "connection"):
                    raise
                time.sleep(0.02)
        return c.call(*args)


def main() -> None:
    broken = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--broken=")), "")
    driver = Driver(broken)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["op"] == "hello":
            if broken == "slow":
                time.sleep(2)
            answer = driver.hello(msg)
        elif broken == "crash":
            sys.exit("crashing on purpose")
        elif broken == "garbage":
            print("this is not json", flush=True)
            continue
        elif broken == "hang":
            time.sleep(3600)
            continue
        else:
            try:
                answer = driver.run(msg["op"], msg.get("args", {}))
            except Failed as e:
                answer = {"error": e.code}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
