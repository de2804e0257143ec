#!/usr/bin/env python3
"""Renders docs/vocabulary.md from conformance/vocabulary.json, the one table of the vocabulary.

The JSON is the source (tools/parity.py checks every face against it); the page is its human
view: the rules of idiom, then one table per primitive whose rows are the words and whose
columns are the faces, then what each face still spells otherwise today.

    tools/vocabulary.py           writes docs/vocabulary.md
    tools/vocabulary.py --check   exits 1 when docs/vocabulary.md is not what the JSON renders

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "conformance" / "vocabulary.json"
PAGE = ROOT / "docs" / "vocabulary.md"
FACES = ("rust", "http", "python", "node", "java", "go")

INTRO = """\
# Vocabulary: one name for each thing, in every face

Every face of redis-atomic (the Rust library, `serve`'s HTTP API, the Python and Node packages,
and the Java and Go libraries as they land) calls the same library, so each must also *say* the
same thing: one word per operation, outcome, handle, error and option, spelled in each face's
idiom. This page is generated from [`conformance/vocabulary.json`](../conformance/vocabulary.json)
by `tools/vocabulary.py`; `tools/parity.py` (run by `make test`) fails when a face drifts from it.
Edit the JSON, never this page.

## Rules of idiom

{rules}

## Reading the tables

A row is one word (`kind`: operation, outcome, handle, method, type, value, option, error, fact).
A cell is that face's spelling: Rust as a path from the crate root; HTTP as a route with the
request field, or the response status and field (`acquired=false`) that carry the word, and
errors as a status and problem kind (`urn:redis-atomic:problem:<kind>`); Python as exported by
`redis_atomic` (`Class(param)` a constructor or method parameter, an `Async` twin having the same
members); Node as declared in `index.d.ts`. `—` is a face that deliberately lacks the word, and
says why. A column appears once some word has a spelling in it (Java and Go: when they land).
An outcome is a *success* (what was asked happened), a *refusal* (nothing happened: a value, never
an error; falsy in Python) or a *state* (what a read found).

{index}
"""


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        if "problem" in value:
            return f"`{value['status']}` `{value['problem']}`"
        text = f"`{value['route']}`"
        if "request" in value:
            text += f" `{value['request']}`"
        if "status" in value:
            field = value.get("field", "")
            if "value" in value:
                field += "=" + json.dumps(value["value"])
            text += f" → `{value['status']}`" + (f" `{field}`" if field else "")
        return text
    return f"`{value}`"


def escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def face_cell(row: dict[str, Any], face: str, above: dict[str, Any] | None) -> str:
    """A spelling, or `—` and why the face lacks the word (`as above` when the row above said it)."""
    if row[face] is not None:
        return escape(cell(row[face]))
    why = row.get("why", {}).get(face)
    if above is not None and above[face] is None and why and above.get("why", {}).get(face) == why:
        return "— *as above*"
    return "— " + escape(f"*{why}*") if why else "—"


def table(prim: dict[str, Any], faces: list[str]) -> list[str]:
    head = ["kind", "word", "meaning", *faces]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    above = None
    for row in prim["words"]:
        meaning = row["meaning"] + (f" ({row['note']})" if row.get("note") else "")
        if row.get("code"):
            meaning += f"; code `{row['code']}`"
        kind = row["kind"] + (f" ({row['result']})" if row.get("result") else "")
        cells = [kind, f"`{row['word']}`", escape(meaning), *(face_cell(row, f, above) for f in faces)]
        lines.append("| " + " | ".join(cells) + " |")
        above = row
    return lines


def today(prim: dict[str, Any]) -> list[str]:
    notes = [
        f"* {face}: `{row['word']}` is {escape(text)}"
        for row in prim["words"]
        for face, text in sorted(row.get("today", {}).items())
    ]
    return ["", "Spelled otherwise today (the work list):", "", *notes] if notes else []


def render(doc: dict[str, Any]) -> str:
    prims = doc["primitives"]
    faces = [f for f in FACES if any(r[f] is not None for p in prims for r in p["words"])]
    index = "\n".join(f"* [{p['title']}](#{anchor(p['title'])})" for p in prims)
    out = [INTRO.format(rules="\n".join(f"* {r}" for r in doc["rules"]), index=index)]
    for prim in prims:
        out += [f"## {prim['title']}", "", prim["about"], "", *table(prim, faces), *today(prim), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def anchor(title: str) -> str:
    keep = "".join(ch for ch in title.lower() if ch.isalnum() or ch in " -")
    return keep.replace(" ", "-")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    p.add_argument("--table", default=str(TABLE))
    p.add_argument("--page", default=str(PAGE))
    args = p.parse_args(argv)
    text = render(json.loads(Path(args.table).read_text()))
    page = Path(args.page)
    if args.check:
        if not page.exists() or page.read_text() != text:
            print(f"{page} is stale: run tools/vocabulary.py", file=sys.stderr)
            return 1
        return 0
    page.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
