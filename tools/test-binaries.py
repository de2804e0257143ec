#!/usr/bin/env python3
"""Print the test executables of some crates from `cargo test --no-run --message-format=json`.

Used by `make test` for the server matrix: the second pass runs the binaries the first pass
built instead of `cargo test -p <crate>`, which would rebuild every dependency whose features
differ when one package is built alone (about 1m45s on 2 cores).

With `--bin NAME` it prints the executable of binary target NAME as that same pass built it
(`make test` runs `redis-atomic scripts check` and `test` with it; `cargo run -p` would rebuild).

usage: cargo test --workspace --no-run --message-format=json | tools/test-binaries.py CRATE_DIR...
       cargo test --workspace --no-run --message-format=json | tools/test-binaries.py --bin NAME
"""
import json
import os
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
if sys.argv[1] == "--bin":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        target = msg.get("target", {})
        if (msg.get("reason") == "compiler-artifact" and msg.get("executable")
                and target.get("kind") == ["bin"] and target.get("name") == sys.argv[2]
                and not msg.get("profile", {}).get("test")):
            print(msg["executable"])
            sys.exit(0)
    sys.exit(f"no binary {sys.argv[2]} found")
crate_dirs = [os.path.realpath(d) + os.sep for d in sys.argv[1:]]
found = []
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
        continue
    if not msg.get("profile", {}).get("test"):
        continue
    target = msg.get("target", {})
    src = os.path.realpath(target.get("src_path", ""))
    if not any(src.startswith(d) for d in crate_dirs):
        continue
    if found.count(msg["executable"]) == 0:
        found.append(msg["executable"])
if not found:
    sys.exit(f"no test executables found under {' '.join(crate_dirs)}")
print("\n".join(found))
