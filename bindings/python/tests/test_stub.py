"""The stub of the native module (``_native.pyi``, hand-written) checked against the compiled
module by mypy's ``stubtest``: every class, method, parameter and default the stub declares
exists at run time with that shape, and nothing public of the module is missing from it. A
drift (a renamed outcome, a new option, a parameter dropped) fails here, not in a user's
type checker."""

from __future__ import annotations

import subprocess
import sys


def test_stub_matches_the_compiled_module() -> None:
    # --ignore-disjoint-bases: every PyO3 class is a "disjoint base" at run time (it cannot be
    # combined with another native base); the stub marks them `@final` instead of PEP 800's
    # `@disjoint_base`, which mypy 1.18 checks only under that name.
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "redis_atomic._native", "--ignore-disjoint-bases"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
