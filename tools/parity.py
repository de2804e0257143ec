#!/usr/bin/env python3
"""The parity check: every face exposes every word of conformance/vocabulary.json under its spelling.

Each face is read from what it ships, never from a copy: the Rust library's public source
(`pub` enums, their variants, `pub fn` of each type's `impl` blocks), `serve`'s OpenAPI document
(its paths and response schemas), the Python package as imported in the interpreter given by
`--python` (and its `_native.pyi` stub against the compiled module, by mypy's stubtest), and the
Node package's declarations (`dist/*.d.ts`, emitted by tsc), the Go module's exported declarations
(`bindings/go/*.go`) and the Java library's public sources (`bindings/java`): every word with a Go
or Java spelling must be there; words without one are listed as not yet implemented while those
libraries grow.

Every drift is one line, `FACE: KIND WORD: what is wrong`; exit 1 on any, 0 when none, 2 on usage.

    tools/parity.py --face rust,node
    tools/parity.py --face http --serve-bin target/debug/redis-atomic
    tools/parity.py --face python --python target/python-venv/bin/python

Python 3.11 standard library only (the Python face's probe runs in the given interpreter).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "conformance" / "vocabulary.json"
FACES = ("rust", "http", "python", "node", "java", "go")
LATER = {"java": "bindings/java", "go": "bindings/go"}  # faces checked once their library exists

Row = dict[str, Any]
Drifts = list[str]


def rows(table: dict[str, Any]) -> Iterator[Row]:
    for prim in table["primitives"]:
        yield from prim["words"]


def drift(face: str, row: Row, what: str) -> str:
    return f"{face}: {row['kind']} {row['word']}: {what}"


def check_each(table: dict[str, Any], face: str, missing: Callable[[Row], str | None]) -> Drifts:
    """One line for each word the face spells whose spelling `missing` says is not there."""
    out = []
    for row in rows(table):
        what = missing(row) if row[face] is not None else None
        if what:
            out.append(drift(face, row, what))
    return out


def check_table(table: dict[str, Any]) -> Drifts:
    """The table itself: every face key present; a null spelling says why (Java, Go: not yet)."""
    out = []
    for row in rows(table):
        for face in FACES:
            if face not in row:
                out.append(drift("table", row, f"no {face} key"))
            elif row[face] is None and face not in LATER and face not in row.get("why", {}):
                out.append(drift("table", row, f"{face} is null without a why"))
    return out


# --- rust -------------------------------------------------------------------------------------


def rust_module(path: Path, src: Path) -> str:
    """`primitives/lock/mod.rs` → `lock`, `error.rs` → `error`, `lib.rs` → ``."""
    parts = list(path.relative_to(src).parts)
    if parts[0] == "primitives":
        parts = parts[1:]
    first = parts[0]
    return "" if first == "lib.rs" else first.removesuffix(".rs")


def impl_target(line: str) -> str | None:
    """The type an `impl` line is for: `impl<L: Lease> Watched<L> {` → `Watched`."""
    rest = line[4:]
    if rest.startswith("<"):  # skip the generics, which may nest
        depth = 0
        for i, ch in enumerate(rest):
            depth += {"<": 1, ">": -1}.get(ch, 0)
            if depth == 0:
                rest = rest[i + 1 :]
                break
    rest = rest.split(" for ", 1)[-1].strip()
    m = re.match(r"[\w:]*?(\w+)\s*(?:<|\{|where|$)", rest)
    return m.group(1) if m else None


class RustIndex:
    """The public items of the library's source: types, enum variants, methods, per module."""

    def __init__(self, src: Path):
        self.types: dict[tuple[str, str], set[str]] = {}  # (module, Type) → variants / methods
        for path in sorted(src.rglob("*.rs")):
            text = path.read_text().split("\n#[cfg(test)]\nmod tests", 1)[0]
            self._scan(rust_module(path, src), text.splitlines())

    def _scan(self, module: str, lines: list[str]) -> None:
        owner: tuple[str, str] | None = None
        for line in lines:
            if line.startswith("}"):
                owner = None
                continue
            m = re.match(r"pub (?:struct|enum|trait|type) (\w+)", line)
            if m:
                owner = (module, m.group(1))
                self.types.setdefault(owner, set())
                if not line.rstrip().endswith("{"):
                    owner = None
                continue
            if line.startswith("impl"):
                name = impl_target(line)
                owner = (module, name) if name else None
                continue
            if owner is None:
                continue
            m = re.match(r"    (?:pub (?:async )?fn|fn) (\w+)|    ([A-Z]\w*)\s*(?:[({,]|$)", line)
            if m:
                self.types.setdefault(owner, set()).add(m.group(1) or m.group(2))

    def find(self, module: str, name: str) -> list[set[str]]:
        return [v for (mod, n), v in self.types.items() if n == name and (not module or mod == module)]


def rust_missing(index: RustIndex, spelling: str) -> str | None:
    """What of a Rust path is missing, or None: `lock::Acquire::Held`, `lock::Locks::acquire`."""
    parts = spelling.split("::")
    module = parts[0] if parts[0][:1].islower() and len(parts) > 1 else ""
    names = parts[1:] if module else parts
    while module and names and names[0][:1].islower():  # `script::reply::RawReply`
        names = names[1:]
    found = index.find(module, names[0])
    if not found:
        return f"type {names[0]} missing" + (f" in module {module}" if module else "")
    if len(names) > 1 and not any(names[1] in members for members in found):
        kind = "method" if names[1][:1].islower() else "variant"
        return f"{kind} {names[0]}::{names[1]} missing"
    return None


def check_rust(table: dict[str, Any], src: Path) -> Drifts:
    index = RustIndex(src)
    return check_each(table, "rust", lambda row: rust_missing(index, row["rust"]))


# --- node -------------------------------------------------------------------------------------


class NodeIndex:
    """The declarations of the Node package: classes, interfaces, type aliases, functions."""

    DECL = re.compile(
        r"^export (?:declare )?(?:abstract )?(class|interface|type|function|const enum|enum) (\w+)"
        r"(?:<[^>]*>)?(?: extends (\w+))?(.*)$"
    )
    MEMBER = re.compile(r"^\s+(static )?(?:readonly )?(?:get |set )?(\w+)\??\s*([(:<])(.*)$")

    def __init__(self, texts: list[str]):
        self.decls: dict[str, dict[str, Any]] = {}
        for text in texts:
            self._scan(text.splitlines())

    def _scan(self, lines: list[str]) -> None:
        current: dict[str, Any] | None = None
        for line in lines:
            m = self.DECL.match(line)
            if m:
                kind, name, parent, rest = m.groups()
                # TypeScript merges declarations of one name (a class and an interface that
                # adds `[Symbol.asyncDispose]`): so does the index.
                earlier = self.decls.get(name)
                current = {"kind": kind, "parent": parent, "members": {}, "statics": {}, "text": rest}
                if earlier is not None:
                    current["members"] = earlier["members"]
                    current["statics"] = earlier["statics"]
                    current["parent"] = parent or earlier["parent"]
                    if earlier["kind"] == "class":
                        current["kind"] = "class"
                self.decls[name] = current
                if not rest.rstrip().endswith("{"):
                    current = None
                continue
            if line.startswith("}"):
                current = None
            elif current is not None:
                m = self.MEMBER.match(line)
                if m and not line.lstrip().startswith(("*", "/")):
                    # An instance member's declaration wins over a static one of the same name
                    # (an error class's `static code: string` beside its `code: 'literal'`).
                    static, member, text = m.group(1), m.group(2), m.group(3) + m.group(4)
                    if static:
                        current["statics"].setdefault(member, text)
                    else:
                        current["members"].setdefault(member, text)

    def member(self, name: str, member: str) -> str | None:
        """The declaration text of `name.member`, looked up through `extends`."""
        seen = set()
        while name in self.decls and name not in seen:
            seen.add(name)
            decl = self.decls[name]
            for members in (decl["members"], decl["statics"]):
                if member in members:
                    return str(members[member])
            name = decl["parent"]
        return None


def node_missing(index: NodeIndex, spelling: str, code: str | None) -> str | None:
    """What of a Node spelling is missing: `Held`, `Locks.acquire`, `ClientOptions.delivery='eval'`."""
    literal = None
    if "=" in spelling:
        spelling, literal = spelling.split("=", 1)
    name, _, member = spelling.partition(".")
    decl = index.decls.get(name)
    if decl is None:
        return f"{'function' if name[:1].islower() else 'declaration'} {name} missing"
    text = decl["text"]
    if member:
        found = index.member(name, member)
        if found is None:
            return f"member {name}.{member} missing"
        text = found
    if literal and literal not in text:
        return f"{spelling} does not admit {literal}"
    if code is not None:
        declared = index.member(name, "code") or ""
        if f"'{code}'" not in declared:
            return f"{name}.code is {declared.lstrip(':').strip() or 'undeclared'}, not '{code}'"
    return None


def check_node(table: dict[str, Any], folder: Path) -> Drifts:
    # The declarations tsc emits from the package's TypeScript sources (dist/), every module.
    texts = [p.read_text() for p in sorted((folder / "dist").glob("*.d.ts"))]
    index = NodeIndex(texts)
    return check_each(table, "node", lambda row: node_missing(index, row["node"], row.get("code")))


# --- http -------------------------------------------------------------------------------------

SERVE_CONFIG = '[limits.api]\nlimits = [ { algorithm = "gcra", limit = 10, period_ms = 1000, burst = 5 } ]\n'


def serve_document(binary: str) -> dict[str, Any]:
    """`BIN serve` on an embedded redis-server, on a free port of 127.0.0.1: its /openapi.json."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "serve.toml"
        config.write_text(SERVE_CONFIG)
        cmd = [binary, "serve", "--listen", "127.0.0.1:0", "--config", str(config)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = (proc.stdout.readline() if proc.stdout else "").strip()
            if not url.startswith("http://127.0.0.1:"):
                raise SystemExit(f"parity: {binary} serve did not start (first line {url!r})")
            with urllib.request.urlopen(url + "/openapi.json", timeout=30) as reply:
                return dict(json.loads(reply.read()))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def same_route(template: str, path: str) -> bool:
    """`/v1/limits/{policy}/consume` matches `/v1/limits/api/consume`: parameters match anything."""
    a, b = template.strip("/").split("/"), path.strip("/").split("/")
    return len(a) == len(b) and all(x == y or x.startswith("{") or y.startswith("{") for x, y in zip(a, b))


def properties(doc: dict[str, Any], schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """A schema's properties, through `$ref`, `allOf`, `oneOf` and `anyOf`."""
    if depth > 8:
        return {}
    if "$ref" in schema:
        target: Any = doc
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {})
        return properties(doc, target, depth + 1)
    props = dict(schema.get("properties", {}))
    for key in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(key, []):
            props.update(properties(doc, sub, depth + 1))
    return props


def content_properties(doc: dict[str, Any], holder: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for media in holder.get("content", {}).values():
        props.update(properties(doc, media.get("schema", {})))
    return props


def http_operations(doc: dict[str, Any], route: str) -> list[dict[str, Any]]:
    method, template = route.split(" ", 1)
    return [
        item[method.lower()]
        for path, item in doc.get("paths", {}).items()
        if same_route(template, path) and method.lower() in item
    ]


def problem_kinds(doc: dict[str, Any], status: int) -> set[str]:
    kinds: set[str] = set()
    for item in doc.get("paths", {}).values():
        for op in item.values():
            answer = op.get("responses", {}).get(str(status)) if isinstance(op, dict) else None
            if answer:
                kind = content_properties(doc, answer).get("type", {})
                kinds.update(k.rsplit(":", 1)[-1] for k in kind.get("enum", []))
    return kinds


def http_missing(doc: dict[str, Any], spelling: dict[str, Any]) -> str | None:
    if "problem" in spelling:
        if spelling["problem"] not in problem_kinds(doc, spelling["status"]):
            return f"no {spelling['status']} problem {spelling['problem']}"
        return None
    ops = http_operations(doc, spelling["route"])
    if not ops:
        return f"route {spelling['route']} missing"
    if "request" in spelling:
        body = ops[0].get("requestBody", {})
        if spelling["request"] not in content_properties(doc, body):
            return f"request field {spelling['request']} of {spelling['route']} missing"
    if "status" in spelling:
        answer = ops[0].get("responses", {}).get(str(spelling["status"]))
        if answer is None:
            return f"status {spelling['status']} of {spelling['route']} missing"
        field = spelling.get("field")
        if field and field not in content_properties(doc, answer):
            return f"field {field} of {spelling['route']} {spelling['status']} missing"
    return None


def check_http(table: dict[str, Any], doc: dict[str, Any]) -> Drifts:
    return check_each(table, "http", lambda row: http_missing(doc, row["http"]))


# --- python -----------------------------------------------------------------------------------

# Runs in the package's interpreter: reads [[key, spelling, code], ...] on stdin, prints
# {key: what is missing} for each spelling the imported package lacks.
PY_PROBE = r'''
import inspect, json, sys, typing
import redis_atomic as ra

def attr(obj, name):
    if hasattr(obj, name):
        return True
    if isinstance(obj, type) and issubclass(obj, BaseException):
        try:
            return hasattr(obj("probe"), name)
        except Exception:
            return False
    return False

def params(obj):
    try:
        return set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return None

def missing(spelling, code):
    literal = None
    if "=" in spelling:
        spelling, literal = spelling.split("=", 1)
        literal = literal.strip("'")
    param = None
    if spelling.endswith(")"):
        spelling, param = spelling[:-1].split("(", 1)
    name, _, member = spelling.partition(".")
    if not hasattr(ra, name):
        return f"{'class' if name[:1].isupper() else 'name'} {name} missing"
    names = [name] + ([f"Async{name}"] if hasattr(ra, f"Async{name}") and member else [])
    for n in names:
        obj = getattr(ra, n)
        if member:
            if not attr(obj, member):
                return f"{n}.{member} missing"
            target = getattr(obj, member, None)
        else:
            target = obj
        if param:
            got = params(target)
            if got is not None and param not in got:
                return f"{n}{'.' + member if member else ''} has no parameter {param}"
    obj = getattr(ra, name)
    if literal is not None and literal not in typing.get_args(obj):
        return f"{name} does not admit {literal!r}"
    if code is not None:
        if not (isinstance(obj, type) and issubclass(obj, ra.RedisAtomicError)):
            return f"{name} is not a RedisAtomicError"
        if getattr(obj, "code", None) != code:
            return f"{name}.code is {getattr(obj, 'code', None)!r}, not {code!r}"
    return None

out = {}
for key, spelling, code in json.load(sys.stdin):
    m = missing(spelling, code)
    if m:
        out[key] = m
print(json.dumps(out))
'''


def check_python(table: dict[str, Any], python: str) -> Drifts:
    wanted = [(i, row) for i, row in enumerate(rows(table)) if row["python"]]
    probe = json.dumps([[i, row["python"], row.get("code")] for i, row in wanted])
    done = subprocess.run([python, "-c", PY_PROBE], input=probe, capture_output=True, text=True, cwd="/")
    if done.returncode != 0:
        return [f"python: cannot import redis_atomic with {python}: {done.stderr.strip().splitlines()[-1:]}"]
    found = json.loads(done.stdout)
    return [drift("python", row, found[str(i)]) for i, row in wanted if str(i) in found]


STUB_ALLOWLIST = ROOT / "tools" / "stubtest-allowlist.txt"


def check_stub(python: str) -> Drifts:
    """mypy's stubtest: `_native.pyi` against the compiled `redis_atomic._native`."""
    cmd = [python, "-m", "mypy.stubtest", "redis_atomic._native", "--concise"]
    if STUB_ALLOWLIST.exists():
        cmd += ["--allowlist", str(STUB_ALLOWLIST)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd="/")
    if done.returncode == 0:
        return []
    lines = [line for line in done.stdout.splitlines() if line.strip()] or [done.stderr.strip()]
    return [f"python: stub {line}" for line in lines]


# --- java ---------------------------------------------------------------------------------------

JAVA_SRC = "redis-atomic/src/main/java"  # under bindings/java: the library's hand-written and generated sources
JAVA_STRIP = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//[^\n]*|/\*.*?\*/', re.S)
JAVA_TYPE = re.compile(r"\b(?:class|interface|record|enum)\s+(\w+)")


class JavaIndex:
    """The public names of the Java library's sources: types (nested ones as Outer.Inner) with their
    methods, record components and enum constants."""

    def __init__(self, src: Path):
        self.members: dict[str, set[str]] = {}  # type → public methods, components, constants
        self.interfaces: set[str] = set()  # their methods are public without the word
        self.parents: dict[str, str] = {}  # class → the class it extends (inherited members count)
        for path in sorted(src.rglob("*.java")):
            self._scan(JAVA_STRIP.sub('""', path.read_text()))

    def inherited(self, name: str) -> set[str]:
        """The members of a type and of the classes it extends (within the library)."""
        out: set[str] = set()
        seen: set[str] = set()
        current: str | None = name
        while current and current not in seen:
            seen.add(current)
            out |= self.members.get(current, set())
            current = self.parents.get(current)
        return out

    def _scan(self, text: str) -> None:
        stack: list[tuple[str, int]] = []  # (qualified type, brace depth of its body)
        depth = 0
        pending: str | None = None
        for token in re.finditer(r"[{};]|[^{};]+", text):
            t = token.group(0)
            if t == "{":
                depth += 1
                if pending:
                    stack.append((pending, depth))
                    self.members.setdefault(pending, set())
                    pending = None
            elif t == "}":
                if stack and stack[-1][1] == depth:
                    stack.pop()
                depth -= 1
            elif t != ";":
                self._declaration(t, stack, depth)
                m = JAVA_TYPE.search(t)
                if m and "new " not in t:
                    outer = stack[-1][0] + "." if stack else ""
                    pending = outer + m.group(1)
                    ext = re.search(r"\bextends\s+(\w+)", t)
                    if ext and re.search(r"\bclass\s", t):
                        self.parents[pending] = ext.group(1)
                    if re.search(r"\binterface\s", t):
                        self.interfaces.add(pending)
                    if re.search(r"\benum\s", t):
                        self.members.setdefault(pending, set()).update({"values", "valueOf"})
                    rec = re.search(r"\brecord\s+\w+\s*\(([^)]*)\)", t)
                    for comp in rec.group(1).split(",") if rec else []:
                        if comp.strip():
                            self.members.setdefault(pending, set()).add(comp.split()[-1])

    def _declaration(self, t: str, stack: list[tuple[str, int]], depth: int) -> None:
        if not stack or stack[-1][1] != depth:
            return
        owner = stack[-1][0]
        m = re.search(r"(\w+)\s*\([^()]*\)\s*(?:throws [\w., ]+)?\s*$", t)
        public = re.search(r"\bpublic\b", t) or (owner in self.interfaces and not re.search(r"\bprivate\b", t))
        if m and public:
            self.members.setdefault(owner, set()).add(m.group(1))
        for c in re.findall(r"(?:^|,)\s*([A-Z][A-Z0-9_]*)\s*(?=\(|,|$)", t.strip()):
            self.members.setdefault(owner, set()).add(c)


def java_missing(index: JavaIndex, spelling: str) -> str | None:
    """What of a Java spelling is missing, or None: `Held` or `Acquire.Held` (a type),
    `Locks.acquire` (a method, component or constant of a type)."""
    if not re.fullmatch(r"\w+(?:\.\w+)*", spelling):
        return f"unreadable spelling {spelling!r}"
    parts = spelling.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        if name in index.members:
            rest = parts[cut:]
            if not rest:
                return None
            if len(rest) == 1 and rest[0] in index.inherited(name):
                return None
            return f"{name}.{'.'.join(rest)} missing"
    return f"{parts[0]} missing"


def check_java(table: dict[str, Any], root: Path) -> Drifts:
    """Every word with a Java spelling is public under it (see check_growing)."""
    def reader(folder: Path) -> Callable[[str], str | None]:
        index = JavaIndex(folder / JAVA_SRC)
        return lambda spelling: java_missing(index, spelling)

    return check_growing(table, "java", root, reader)


# --- go -----------------------------------------------------------------------------------------


class GoIndex:
    """The exported names of the Go package's source (`bindings/go/*.go`, tests excluded): types
    with their fields and methods, and top-level funcs, vars and consts."""

    def __init__(self, pkg: Path):
        self.members: dict[str, set[str]] = {}  # type → fields and methods
        self.embeds: dict[str, set[str]] = {}  # type → the types it embeds (their members promote)
        self.names: set[str] = set()  # types, funcs, vars, consts
        for path in sorted(pkg.glob("*.go")):
            if not path.name.endswith("_test.go"):
                self._scan(path.read_text().splitlines())

    def has_member(self, name: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
        """A field or method of `name`, its own or promoted from a type it embeds."""
        if member in self.members.get(name, set()):
            return True
        inner = self.embeds.get(name, set()) - seen
        return any(self.has_member(e, member, seen | {name}) for e in inner)

    def _scan(self, lines: list[str]) -> None:
        block: str | None = None  # the struct whose fields follow, or "" in a var/const block
        for line in lines:
            if line.startswith(")") or line.startswith("}"):
                block = None
                continue
            if block:
                m = re.fullmatch(r"\t\*?(\w+)", line)  # an embedded type
                if m:
                    self.embeds.setdefault(block, set()).add(m.group(1))
                    continue
            if block is not None:
                m = re.match(r"\t([A-Z]\w*(?:, [A-Z]\w*)*)\s", line)
                for name in m.group(1).split(", ") if m else []:
                    (self.members.setdefault(block, set()) if block else self.names).add(name)
                continue
            m = re.match(r"type (\w+) (struct|interface)? ?\{?", line)
            if m:
                self.names.add(m.group(1))
                block = m.group(1) if line.rstrip().endswith("{") else None
                continue
            m = re.match(r"func \(\w* ?\*?(\w+)\) ([A-Z]\w*)\(", line)
            if m:
                self.members.setdefault(m.group(1), set()).add(m.group(2))
                continue
            m = re.match(r"(?:func|var|const) ([A-Z]\w*)", line)
            if m:
                self.names.add(m.group(1))
            elif re.match(r"(?:var|const) \($", line):
                block = ""


def go_missing(index: GoIndex, spelling: str) -> str | None:
    """What of a Go spelling is missing, or None: `Held`, `Lock.Fence`, `Locks.Acquire(WithToken)`
    (a call and an option constructor it takes)."""
    m = re.fullmatch(r"(\w+)(?:\.(\w+))?(?:\((\w+)\))?", spelling)
    if not m:
        return f"unreadable spelling {spelling!r}"
    name, member, option = m.groups()
    if name not in index.names:
        return f"{name} missing"
    if member and not index.has_member(name, member):
        return f"{name}.{member} missing"
    if option and option not in index.names:
        return f"option {option} missing"
    return None


def check_go(table: dict[str, Any], root: Path) -> Drifts:
    """Every word with a Go spelling is exported under it (see check_growing)."""
    def reader(folder: Path) -> Callable[[str], str | None]:
        index = GoIndex(folder)
        return lambda spelling: go_missing(index, spelling)

    return check_growing(table, "go", root, reader)


def check_growing(table: dict[str, Any], face: str, root: Path,
                  reader: Callable[[Path], Callable[[str], str | None]]) -> Drifts:
    """A library that grows (Go, Java): skipped until its folder exists; then every word with a
    spelling must be there (`reader(folder)` answers what of a spelling is missing), and words
    without one (and without a why) are listed as not yet implemented, which is no drift."""
    folder = root / LATER[face]
    if not folder.is_dir():
        print(f"parity: {face}: skipped ({LATER[face]} does not exist yet)")
        return []
    missing = reader(folder)
    later = [r["word"] for r in rows(table) if r[face] is None and face not in r.get("why", {})]
    if later:
        print(f"parity: {face}: not yet implemented ({len(later)}): {', '.join(later)}", file=sys.stderr)
    return check_each(table, face, lambda row: missing(row[face]))


# --- main -------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> Drifts:
    table = json.loads(Path(args.table).read_text())
    out = check_table(table)
    faces = [f.strip() for f in args.face.split(",") if f.strip()]
    for face in faces:
        if face not in FACES:
            raise SystemExit(f"parity: unknown face {face!r} (one of {', '.join(FACES)})")
    checks: dict[str, Callable[[], Drifts]] = {
        "rust": lambda: check_rust(table, Path(args.rust_src)),
        "node": lambda: check_node(table, Path(args.node_dir)),
        "http": lambda: check_http(table, http_doc(args)),
        "python": lambda: check_python(table, interpreter(args.python)) + check_stub(interpreter(args.python)),
        "java": lambda: check_java(table, Path(args.root)),
        "go": lambda: check_go(table, Path(args.root)),
    }
    for face in faces:
        found = checks[face]()
        out += found
        print(f"parity: {face}: {len(found)} drift(s)", file=sys.stderr)
    return out


def need(value: str | None, flag: str) -> str:
    if not value:
        raise SystemExit(f"parity: this face needs {flag}")
    return value


def interpreter(path: str | None) -> str:
    """The `--python` interpreter, absolute (its probes run from `/`, away from any source tree)."""
    path = need(path, "--python")
    return os.path.abspath(path) if os.sep in path else path


def http_doc(args: argparse.Namespace) -> dict[str, Any]:
    if args.openapi:
        return dict(json.loads(Path(args.openapi).read_text()))
    return serve_document(need(args.serve_bin, "--serve-bin or --openapi"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--face", default="rust,node", help="comma-separated: " + ",".join(FACES))
    p.add_argument("--table", default=str(TABLE))
    p.add_argument("--root", default=str(ROOT), help="the repository (for bindings/java, bindings/go)")
    p.add_argument("--rust-src", default=str(ROOT / "crates" / "redis-atomic" / "src"))
    p.add_argument("--node-dir", default=str(ROOT / "bindings" / "node"))
    p.add_argument("--python", help="the interpreter that imports the built redis_atomic")
    p.add_argument("--serve-bin", help="the redis-atomic binary (its serve gives /openapi.json)")
    p.add_argument("--openapi", help="an OpenAPI document file instead of --serve-bin")
    args = p.parse_args(argv)
    found = run(args)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
