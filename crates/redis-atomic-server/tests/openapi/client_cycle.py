#!/usr/bin/env python3
"""The client `openapi-python-client` generated from `/openapi.json`, used as generated (no hand
fix): a lock cycle and rate-limit consumes against a real `serve`, each answer parsed into the
generated model its status documents. An undocumented status raises
(`raise_on_unexpected_status`).

usage: client_cycle.py URL OUT_DIR (OUT_DIR holds the generated package `redis_atomic_serve_client`;
the server has contract.py's policies: `login-v2` allows 3 a minute)
"""
import os
import sys

import httpx

sys.path.insert(0, sys.argv[2])

from redis_atomic_serve_client import Client  # noqa: E402
from redis_atomic_serve_client.api.limits import limits_consume_login_v2  # noqa: E402
from redis_atomic_serve_client.api.locks import (  # noqa: E402
    locks_acquire,
    locks_extend,
    locks_release,
)
from redis_atomic_serve_client.models import (  # noqa: E402
    AcquireRequest,
    AcquireResponse,
    ConsumeResponse,
    ExtendRequest,
    ExtendResponse,
    LimitsConsumeLoginV2Body,
    Problem422,
    Problem422Type,
    ReleaseRequest,
    ReleaseResponse,
)

# Names the fuzzing before this run cannot have used (it generates no `.` and `-` mix this long).
RESOURCE = f"generated-client.lock.{os.getpid()}"
IDENTITY = f"generated-client.user.{os.getpid()}"


def expect(response, status, model):
    """The answer has `status` and parsed into `model`; returns the parsed model."""
    assert response.status_code == status, (response.status_code, response.content)
    assert isinstance(response.parsed, model), (type(response.parsed), response.content)
    return response.parsed


def lock_cycle(client):
    """acquire, held by another, extend, release, acquire again with a larger fence; a ttl of 0
    is the documented 422 problem, parsed."""
    first = expect(
        locks_acquire.sync_detailed(RESOURCE, client=client, body=AcquireRequest(ttl_ms=30_000)),
        200, AcquireResponse,
    )
    assert first.acquired and first.token and first.fence >= 1, first
    held = expect(
        locks_acquire.sync_detailed(RESOURCE, client=client, body=AcquireRequest(ttl_ms=30_000)),
        409, AcquireResponse,
    )
    assert not held.acquired and 0 < held.retry_after_ms <= 30_000, held
    extended = expect(
        locks_extend.sync_detailed(
            RESOURCE, client=client,
            body=ExtendRequest(token=first.token, fence=first.fence, ttl_ms=60_000),
        ),
        200, ExtendResponse,
    )
    assert extended.extended and extended.fence == first.fence, extended
    released = expect(
        locks_release.sync_detailed(
            RESOURCE, client=client, body=ReleaseRequest(token=first.token, fence=first.fence)
        ),
        200, ReleaseResponse,
    )
    assert released.released, released
    again = expect(
        locks_release.sync_detailed(
            RESOURCE, client=client, body=ReleaseRequest(token=first.token, fence=first.fence)
        ),
        409, ReleaseResponse,
    )
    assert not again.released, again
    second = expect(
        locks_acquire.sync_detailed(RESOURCE, client=client, body=AcquireRequest(ttl_ms=1_000)),
        200, AcquireResponse,
    )
    assert second.fence > first.fence, (first, second)
    bad = expect(
        locks_acquire.sync_detailed(RESOURCE, client=client, body=AcquireRequest(ttl_ms=0)),
        422, Problem422,
    )
    assert bad.type_ == Problem422Type("urn:redis-atomic:problem:invalid"), bad
    assert bad.status == 422 and bad.detail, bad
    print(f"lock cycle: fences {first.fence} then {second.fence}, 409 while held, 422 parsed")


def consumes(client):
    """`login-v2` allows 3 a minute: three consumes are allowed (remaining 2, 1, 0), the fourth
    is 429; a resent request id is replayed, not charged."""
    remaining = []
    for n in range(3):
        body = LimitsConsumeLoginV2Body(key=IDENTITY, request_id=f"r{n}")
        got = expect(limits_consume_login_v2.sync_detailed(client=client, body=body), 200,
                     ConsumeResponse)
        assert got.allowed and not got.replayed, got
        remaining.append(got.remaining)
    assert remaining == [2, 1, 0], remaining
    replay = LimitsConsumeLoginV2Body(key=IDENTITY, request_id="r0")
    got = expect(limits_consume_login_v2.sync_detailed(client=client, body=replay), 200,
                 ConsumeResponse)
    assert got.allowed and got.replayed, got
    over = LimitsConsumeLoginV2Body(key=IDENTITY, request_id="r3")
    got = expect(limits_consume_login_v2.sync_detailed(client=client, body=over), 429,
                 ConsumeResponse)
    assert not got.allowed and got.retry_after_ms > 0, got
    print(f"consumes: remaining {remaining}, replay not charged, then 429")


def main():
    with Client(base_url=sys.argv[1], raise_on_unexpected_status=True,
                timeout=httpx.Timeout(30)) as client:
        lock_cycle(client)
        consumes(client)


if __name__ == "__main__":
    main()
