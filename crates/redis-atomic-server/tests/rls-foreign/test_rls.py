"""`redis-atomic rls` through a client nobody here wrote: Python grpcio with PyPI's xds-protos
(the Python code generated from Envoy's data-plane-api, the messages Envoy itself sends).

The binary runs as a subprocess (RLS_BIN) on the reference README's configuration examples plus
one file per algorithm, on an embedded redis-server (or one of the test's own, to stall it).
Run by `make rls-foreign` (part of `make test`).
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from envoy.extensions.common.ratelimit.v3 import ratelimit_pb2
from envoy.service.ratelimit.v3 import rls_pb2, rls_pb2_grpc
from google.protobuf import wrappers_pb2

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "rls-config"
BIN = os.environ.get("RLS_BIN", "redis-atomic")
OK = rls_pb2.RateLimitResponse.OK
OVER = rls_pb2.RateLimitResponse.OVER_LIMIT
ALGORITHMS = ["fixed-window", "anchored-window", "sliding-log", "sliding-window", "token-bucket", "gcra"]


class Rls:
    """A running `redis-atomic rls`, its gRPC stub, and the process to stop."""

    def __init__(self, config: Path, *extra: str) -> None:
        # A deadline no loaded test machine misses (the tests judge decisions, not time), unless
        # a test passes its own (the deadline test).
        patient = () if "--deadline-ms" in extra else ("--deadline-ms", "10000")
        args = [BIN, "rls", "--config", str(config), "--listen", "127.0.0.1:0",
                "--namespace", "py" + uuid.uuid4().hex[:8], *patient, *extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.proc.kill()
            raise RuntimeError(f"rls did not start: {line!r} {self.proc.stderr.read() if self.proc.stderr else ''}")
        self.addr = line[len("http://"):]
        self.channel = grpc.insecure_channel(self.addr)
        self.stub = rls_pb2_grpc.RateLimitServiceStub(self.channel)

    def ask(self, domain: str, *descriptors: ratelimit_pb2.RateLimitDescriptor, hits: int = 0,
            timeout: float = 5.0) -> rls_pb2.RateLimitResponse:
        req = rls_pb2.RateLimitRequest(domain=domain, descriptors=list(descriptors), hits_addend=hits)
        return self.stub.ShouldRateLimit(req, timeout=timeout)

    def stop(self) -> None:
        self.channel.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def desc(*entries: tuple[str, str], hits: int | None = None) -> ratelimit_pb2.RateLimitDescriptor:
    d = ratelimit_pb2.RateLimitDescriptor(
        entries=[ratelimit_pb2.RateLimitDescriptor.Entry(key=k, value=v) for k, v in entries])
    if hits is not None:
        d.hits_addend.CopyFrom(wrappers_pb2.UInt64Value(value=hits))
    return d


@pytest.fixture(scope="module")
def config_dir():
    with tempfile.TemporaryDirectory() as d:
        for f in FIXTURES.glob("*.yaml"):
            shutil.copy(f, d)
        lines = ["domain: algorithms", "descriptors:"]
        for a in ALGORITHMS:
            lines += [f"  - key: algorithm", f"    value: {a}", "    rate_limit:",
                      "      unit: year", "      requests_per_unit: 20", f"      algorithm: {a}"]
        Path(d, "zz-algorithms.yaml").write_text("\n".join(lines) + "\n")
        yield Path(d)


@pytest.fixture(scope="module")
def rls(config_dir):
    # A patient deadline: a loaded CI machine must not turn decisions into UNAVAILABLE here
    # (the deadline itself is the stalled-Redis test's subject).
    r = Rls(config_dir, "--deadline-ms", "5000")
    yield r
    r.stop()


def codes(r: rls_pb2.RateLimitResponse) -> list[int]:
    return [s.code for s in r.statuses]


# The README's examples as table-driven cases: (domain, descriptors, the hits one window admits;
# None: never limited). One request of that many hits passes and spends the tightest limit (its
# remaining 0); one of a hit more can never pass (over the limit on its own, whatever the clock).
README_CASES = [
    ("mongo_cps", [desc(("database", "users"))], 500),
    ("messaging", [desc(("message_type", "marketing"), ("to_number", "2061111111")),
                   desc(("to_number", "2061111111"))], 5),
    ("edge_proxy_per_ip", [desc(("remote_address", "50.0.0.5"))], 0),
    ("edge_proxy_per_ip", [desc(("remote_address", "50.0.0.1"))], 10),
    ("example4", [desc(("key", "value"), ("subkey", "subvalue"))], None),
    ("internal", [desc(("ldap", "x"))], None),
    ("internal", [desc(("azure", "x"))], 100),
    ("example6", [desc(("service", "auth-service"), ("user", "user-a"))], None),
    ("example6", [desc(("service", "auth-service"), ("user", "user-b"))], 20),
    ("example7", [desc(("key_1", "value_1"), ("user", "bkthomps")),
                  desc(("key_2", "value_2"), ("user", "bkthomps"))], 10),
    ("example9", [desc(("key1", "valueXYZ"))], 20),
    ("example11", [desc(("files_no_share", "files_no_share/a.pdf"))], 10),
]


@pytest.mark.parametrize("domain,descriptors,window", README_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(README_CASES)])
def test_reference_readme_examples(rls, domain, descriptors, window):
    if window is None:
        answers = [rls.ask(domain, *descriptors, hits=h).overall_code for h in (1, 1, 1000, 10**6)]
        assert answers == [OK] * 4
        return
    if window > 0:
        spent = rls.ask(domain, *descriptors, hits=window)
        assert spent.overall_code == OK
        assert min(s.limit_remaining for s in spent.statuses if s.HasField("current_limit")) == 0
    over = rls.ask(domain, *descriptors, hits=window + 1)
    assert over.overall_code == OVER
    assert OVER in codes(over)


def test_share_threshold_shares_one_counter(rls):
    for i in range(10):
        assert rls.ask("example11", desc(("files", f"files/s{i}.txt"))).overall_code == OK
    assert rls.ask("example11", desc(("files", "files/other.txt"))).overall_code == OVER
    for _ in range(10):
        assert rls.ask("example11", desc(("files_no_share", "files_no_share/x"))).overall_code == OK
    assert rls.ask("example11", desc(("files_no_share", "files_no_share/y"))).overall_code == OK


def test_unlimited_remaining_is_max_uint32(rls):
    r = rls.ask("internal", desc(("ldap", "y")))
    assert r.statuses[0].limit_remaining == 2**32 - 1


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_exactly_the_limit_of_many_concurrent_requests(rls, algorithm):
    value = algorithm
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda _: rls.ask("algorithms", desc(("algorithm", value))).overall_code,
                                range(100)))
    assert answers.count(OK) == 20, algorithm
    assert answers.count(OVER) == 80


def test_over_one_limit_charges_no_other(rls):
    """The reference's open issues: a request over its per-user limit still charged its per-route
    and global limits there. Here it charges nothing."""
    def gateway(user: str, hits: int | None = None):
        return rls.ask("gateway", desc(("user", user), hits=hits), desc(("route", "/orders"), hits=hits),
                       desc(("generic_key", "global"), hits=hits))
    first = [gateway("eve") for _ in range(2)]
    assert [r.overall_code for r in first] == [OK, OK]
    over = gateway("eve")
    assert over.overall_code == OVER
    assert codes(over) == [OVER, OK, OK]
    assert [s.limit_remaining for s in over.statuses] == [0, 98, 998]
    check = gateway("frank", hits=0)
    assert check.overall_code == OK
    assert [s.limit_remaining for s in check.statuses] == [2, 98, 998]
    assert [s.limit_remaining for s in gateway("frank").statuses] == [1, 97, 997]
    headers = {h.key: h.value for h in over.response_headers_to_add}
    assert headers["RateLimit"].startswith('"per-user";r=0;t=')


def test_request_level_hits_addend_is_a_cost(rls):
    r = rls.ask("gateway", desc(("tokens", "team-1")), hits=30)
    assert r.overall_code == OK and r.statuses[0].limit_remaining == 20
    assert rls.ask("gateway", desc(("tokens", "team-1")), hits=30).overall_code == OVER
    assert rls.ask("gateway", desc(("tokens", "team-1")), hits=20).overall_code == OK


def test_limit_override_from_envoy(rls):
    d = desc(("database", "users"))
    d.limit.requests_per_unit = 2
    d.limit.unit = 2  # MINUTE
    answers = [rls.ask("mongo_cps", d).overall_code for _ in range(3)]
    assert answers == [OK, OK, OVER]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_stalled_redis_answers_unavailable_within_the_deadline(config_dir):
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.02)
        r = Rls(config_dir, "--url", f"redis://127.0.0.1:{port}", "--deadline-ms", "10")
        try:
            assert r.ask("mongo_cps", desc(("database", "default"))).overall_code == OK
            os.kill(redis.pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                with pytest.raises(grpc.RpcError) as e:
                    r.ask("mongo_cps", desc(("database", "default")), timeout=5)
                took = time.monotonic() - started
            finally:
                os.kill(redis.pid, signal.SIGCONT)
            assert e.value.code() == grpc.StatusCode.UNAVAILABLE
            assert took < 2.0, f"waited {took:.3f}s on a stalled Redis"
        finally:
            r.stop()
    finally:
        redis.terminate()
        redis.wait()


def test_grpc_health(rls):
    from grpc_health.v1 import health_pb2, health_pb2_grpc  # type: ignore[import-not-found]
    stub = health_pb2_grpc.HealthStub(rls.channel)
    r = stub.Check(health_pb2.HealthCheckRequest(service="envoy.service.ratelimit.v3.RateLimitService"))
    assert r.status == health_pb2.HealthCheckResponse.SERVING
