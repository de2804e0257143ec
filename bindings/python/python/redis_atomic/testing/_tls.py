"""Throwaway TLS material for test servers, made with the ``openssl`` command: a CA, a server
certificate it signed for ``127.0.0.1`` and ``localhost``, and a client certificate it signed
(P-256 keys, valid two days), as PEM files in a temp dir.

Generated, not checked in, for the reasons the Rust testkit gives: a committed key expires,
leaks into scanners' reports and invites reuse; one generated per session costs a few
milliseconds. Clients verify the server exactly as in production (no "insecure" mode).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, List

__all__ = ["TlsMaterial"]

_Run = Callable[[List[str]], None]
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


class TlsMaterial:
    """A CA and the certificates it signed (``ca_file``, ``client_cert_file``,
    ``client_key_file``, the server's own); ``cleanup()`` removes them."""

    def __init__(self) -> None:
        openssl = shutil.which("openssl")
        if openssl is None:
            raise RuntimeError("openssl not found: install it (Debian: apt-get install openssl)")
        self.dir = Path(tempfile.mkdtemp(prefix="redis-atomic-py-tls-"))
        run = self._runner(openssl)
        run(["req", "-x509", *_KEY, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=redis-atomic test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        self._leaf(run, "server", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                   "extendedKeyUsage=serverAuth")
        self._leaf(run, "client", "subjectAltName=DNS:client", "extendedKeyUsage=clientAuth")

    def _runner(self, openssl: str) -> _Run:
        def run(args: List[str]) -> None:
            done = subprocess.run(
                [openssl, *args], cwd=self.dir, capture_output=True, text=True, timeout=60
            )
            if done.returncode != 0:
                raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()}")

        return run

    def _leaf(self, run: _Run, name: str, *extensions: str) -> None:
        ext = self.dir / f"{name}.ext"
        lines = ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature", *extensions]
        ext.write_text("\n".join(lines) + "\n")
        run(["req", *_KEY, "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", f"/CN=redis-atomic test {name}"])
        run(["x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", ext.name])

    @property
    def ca_file(self) -> Path:
        """The CA certificate: what clients trust."""
        return self.dir / "ca.crt"

    @property
    def client_cert_file(self) -> Path:
        return self.dir / "client.crt"

    @property
    def client_key_file(self) -> Path:
        return self.dir / "client.key"

    def directives(self, port: int, client_auth: bool) -> List[str]:
        """A server's ``tls-*`` config lines (the plain port closed by the caller)."""
        def q(name: str) -> str:
            return f'"{self.dir / name}"'

        return [
            f"tls-port {port}",
            f"tls-cert-file {q('server.crt')}",
            f"tls-key-file {q('server.key')}",
            f"tls-ca-cert-file {q('ca.crt')}",
            f"tls-auth-clients {'yes' if client_auth else 'no'}",
            "tls-replication yes",
        ]

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

