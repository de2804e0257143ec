#!/bin/sh
# Regenerates redis-atomic/src/main/java/io/redisatomic/scripts (the typed script layer) from the
# built-in scripts' headers, with the repository's own CLI. `generate.sh --check` writes nothing and
# fails when the committed sources are not what the CLI generates now (make test runs it).
#   REDIS_ATOMIC_BIN: the CLI to use (default: built with cargo, target/debug/redis-atomic).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$here/redis-atomic/src/main/java/io/redisatomic/scripts"
bin=${REDIS_ATOMIC_BIN:-}
if [ -z "$bin" ]; then
  (cd "$root" && cargo build -q -p redis-atomic-cli)
  bin="${CARGO_TARGET_DIR:-$root/target}/debug/redis-atomic"
fi
gen() { rm -rf "$1" && "$bin" scripts bindings --lang java --package io.redisatomic.scripts --builtin --out "$1"; }
if [ "${1:-}" = "--check" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gen "$tmp/scripts"
  if ! diff -r "$out" "$tmp/scripts" >/dev/null; then
    echo "bindings/java: $out is not current: run bindings/java/generate.sh" >&2
    diff -ru "$out" "$tmp/scripts" | head -20 >&2 || true
    exit 1
  fi
  echo "bindings/java: the generated script layer is current"
else
  gen "$out"
fi
