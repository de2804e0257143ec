"""rediss:// against a TLS-only server that requires client certificates: the CA and the
client certificate from files or PEM bytes; without them the connection is refused with a
typed error. (Run on Redis only: PyPI's Valkey build has no TLS.)"""

from __future__ import annotations

import asyncio

import pytest

import redis_atomic as ra
from redis_atomic.testing import RedisServer


def test_tls_with_ca_and_client_certificate(redis_tls: RedisServer) -> None:
    material = redis_tls.tls
    assert material is not None and redis_tls.url.startswith("rediss://127.0.0.1:")
    files = ra.TlsOptions(
        ca_file=str(material.ca_file),
        client_cert_file=str(material.client_cert_file),
        client_key_file=str(material.client_key_file),
    )
    client = ra.connect(redis_tls.url, tls=files)
    guard = ra.Locks(client, "tls").acquire("r", 10)
    assert isinstance(guard, ra.LockGuard) and guard.release() == ra.Released(guard.fence)
    pems = ra.TlsOptions(
        ca_pem=material.ca_file.read_bytes(),
        client_cert_pem=material.client_cert_file.read_bytes(),
        client_key_pem=material.client_key_file.read_bytes(),
    )

    async def main() -> ra.BoundedAdd:
        aclient = await ra.AsyncClient.connect(redis_tls.url, tls=pems)
        return await ra.AsyncQuotas(aclient, "tls").add("c", 1, (0, 5))

    assert asyncio.run(main()) == ra.Applied(1)


def test_tls_refused_without_trust_or_certificate(redis_tls: RedisServer) -> None:
    material = redis_tls.tls
    assert material is not None
    no_client_cert = ra.TlsOptions(ca_file=str(material.ca_file))
    with pytest.raises((ra.ConnectionError, ra.TlsError, ra.NotSent)):
        ra.Quotas(ra.connect(redis_tls.url, tls=no_client_cert, timeout=2), "t").get("c")
    untrusted = ra.TlsOptions(
        client_cert_file=str(material.client_cert_file),
        client_key_file=str(material.client_key_file),
    )
    with pytest.raises((ra.ConnectionError, ra.TlsError, ra.NotSent)):
        ra.Quotas(ra.connect(redis_tls.url, tls=untrusted, timeout=2), "t").get("c")
    with pytest.raises(ra.TlsError):
        ra.connect(redis_tls.url, tls=ra.TlsOptions(ca_file="/nonexistent/ca.pem"))
