"""The parity check fails when a face renames a word, naming it (python3 -m unittest tools/test_parity.py).

Each test copies a face's real source (or, for HTTP and Python, writes the smallest document or
package that carries the words), checks it against the real table, renames one outcome in the
copy, and asserts the check then fails on exactly that word.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import parity  # noqa: E402
import vocabulary  # noqa: E402

TABLE = json.loads(parity.TABLE.read_text())


def word(name: str) -> dict[str, Any]:
    return next(r for r in parity.rows(TABLE) if r["word"] == name)


def only(*names: str) -> dict[str, Any]:
    """The real table cut down to these words (their spellings as the table has them)."""
    return {"primitives": [{"words": [word(n) for n in names]}]}


class Renames(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_node_rename_of_an_outcome_fails_naming_it(self) -> None:
        shutil.copytree(parity.ROOT / "bindings" / "node" / "dist", self.tmp / "dist")
        before = set(parity.check_node(TABLE, self.tmp))
        dts = self.tmp / "dist" / "locks.d.ts"
        text = dts.read_text()
        self.assertIn("export interface Held {", text)
        dts.write_text(text.replace("export interface Held {", "export interface Busy {"))
        new = set(parity.check_node(TABLE, self.tmp)) - before
        self.assertEqual(new, {"node: outcome lock.acquire/held: declaration Held missing"})

    def test_rust_rename_of_a_variant_fails_naming_it(self) -> None:
        src = self.tmp / "src"
        shutil.copytree(parity.ROOT / "crates" / "redis-atomic" / "src", src)
        before = set(parity.check_rust(TABLE, src))
        lock = src / "primitives" / "lock" / "mod.rs"
        head, enum, tail = lock.read_text().partition("pub enum Acquire {")
        self.assertIn("\n    Held {\n", tail, "the Acquire::Held variant")
        lock.write_text(head + enum + tail.replace("\n    Held {\n", "\n    Busy {\n", 1))
        new = set(parity.check_rust(TABLE, src)) - before
        self.assertEqual(new, {"rust: outcome lock.acquire/held: variant Acquire::Held missing"})

    def test_http_rename_of_a_field_fails_naming_it(self) -> None:
        doc: dict[str, Any] = {
            "paths": {
                "/v1/locks/{resource}/acquire": {
                    "post": {"responses": {"409": {"content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/AcquireResponse"}}}}}}
                }
            },
            "components": {"schemas": {"AcquireResponse": {"properties": {"acquired": {}}}}},
        }
        table = only("lock.acquire/held")
        self.assertEqual(parity.check_http(table, doc), [])
        doc["components"]["schemas"]["AcquireResponse"]["properties"] = {"busy": {}}
        self.assertEqual(
            parity.check_http(table, doc),
            ["http: outcome lock.acquire/held: field acquired of POST /v1/locks/{resource}/acquire 409 missing"],
        )

    def test_python_rename_of_a_class_or_code_fails_naming_it(self) -> None:
        pkg = self.tmp / "redis_atomic"
        pkg.mkdir()
        source = (
            "class RedisAtomicError(Exception):\n    code = 'base'\n"
            "class NotSent(RedisAtomicError):\n    code = 'not_sent'\n"
            "class Held:\n    pass\n"
        )
        (pkg / "__init__.py").write_text(source)
        table = only("lock.acquire/held", "not_sent")
        python = self.python_on(self.tmp)
        self.assertEqual(parity.check_python(table, python), [])
        (pkg / "__init__.py").write_text(source.replace("Held", "Busy").replace("'not_sent'", "'NotSent'"))
        self.assertEqual(
            parity.check_python(table, python),
            [
                "python: outcome lock.acquire/held: class Held missing",
                "python: error not_sent: NotSent.code is 'NotSent', not 'not_sent'",
            ],
        )

    def python_on(self, path: Path) -> str:
        """An interpreter that imports from `path` first: a wrapper script (the probe runs from /)."""
        wrapper = self.tmp / "python"
        wrapper.write_text(f"#!/bin/sh\nPYTHONPATH={path} exec {sys.executable} \"$@\"\n")
        wrapper.chmod(0o755)
        return str(wrapper)


class Table(unittest.TestCase):
    def test_a_null_spelling_without_a_why_fails(self) -> None:
        row = dict(word("lock.inspect"), http=None, why={})
        found = parity.check_table({"primitives": [{"words": [row]}]})
        self.assertEqual(found, ["table: operation lock.inspect: http is null without a why"])

    def test_the_committed_page_is_current_and_a_stale_one_fails(self) -> None:
        self.assertEqual(vocabulary.main(["--check"]), 0)
        with tempfile.TemporaryDirectory() as tmp:
            page = Path(tmp) / "vocabulary.md"
            page.write_text(vocabulary.PAGE.read_text().replace("`lock.acquire/held`", "`lock.acquire/busy`"))
            self.assertEqual(vocabulary.main(["--check", "--page", str(page)]), 1)

    def test_java_rename_fails_naming_it_and_a_null_spelling_is_only_listed(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            table = only("lock.acquire/held", "lock.acquire_with_token", "lock_guard.fence", "semaphore")
            self.assertEqual(parity.check_java(table, Path(tmp)), [])  # no library yet: skipped
            lib = Path(tmp) / "bindings" / "java"
            shutil.copytree(parity.ROOT / "bindings" / "java" / "redis-atomic" / "src" / "main",
                            lib / "redis-atomic" / "src" / "main")
            self.assertEqual(parity.check_java(table, Path(tmp)), [])
            src = lib / parity.JAVA_SRC / "io" / "redisatomic"
            acquire = src / "Acquire.java"
            acquire.write_text(acquire.read_text().replace("record Held(", "record Busy("))
            handle = src / "LeaseHandle.java"  # Lock inherits fence() from it
            handle.write_text(handle.read_text().replace("public long fence()", "public long fencing()"))
            self.assertEqual(
                parity.check_java(table, Path(tmp)),
                [
                    "java: outcome lock.acquire/held: Acquire.Held missing",
                    "java: method lock_guard.fence: Lock.fence missing",
                ],
            )

    def test_go_rename_fails_naming_it_and_a_null_spelling_is_only_listed(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            pkg = Path(tmp) / "bindings" / "go"
            shutil.copytree(parity.ROOT / "bindings" / "go", pkg)
            table = only("lock.acquire/held", "lock.acquire_with_token", "lock_guard.fence", "semaphore")
            self.assertEqual(parity.check_go(table, Path(tmp)), [])
            lock = pkg / "lock.go"
            lock.write_text(lock.read_text().replace("type Held struct", "type Busy struct"))
            # Lock.Fence is promoted from the lease every handle embeds (held.go).
            held = pkg / "held.go"
            held.write_text(held.read_text().replace("func (l *lease) Fence()", "func (l *lease) Fencing()"))
            self.assertEqual(
                parity.check_go(table, Path(tmp)),
                [
                    "go: outcome lock.acquire/held: Held missing",
                    "go: method lock_guard.fence: Lock.Fence missing",
                ],
            )

if __name__ == "__main__":
    unittest.main()
