#!/bin/sh
# Regenerates redis-atomic/src/main/java/io/redisatomic/scripts (the typed script layer) from the
# built-in scripts' headers, with the repository's own CLI. `generate.sh --check` writes nothing and
# fails when the committed sources are not what the CLI generates now (make test runs it).
#   REDIS_ATOMIC_BIN: the CLI to use (default: built with cargo, target/debug/redis-atomic).
set -eu
cd "$(dirname "$0")"
committed=redis-atomic/src/main/java/io/redisatomic/scripts
cli() {
  if [ -n "${REDIS_ATOMIC_BIN:-}" ]; then echo "$REDIS_ATOMIC_BIN"; return; fi
  (cd ../.. && cargo build -q -p redis-atomic-cli) && echo "${CARGO_TARGET_DIR:-$PWD/../../target}/debug/redis-atomic"
}
bin=$(cli)
into() { rm -rf "$1" && "$bin" scripts bindings --lang java --package io.redisatomic.scripts --builtin --out "$1"; }
[ "${1:-}" = "--check" ] || { into "$committed"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
into "$tmp/scripts"
if diff -r "$committed" "$tmp/scripts" >/dev/null; then
  echo "bindings/java: the generated script layer is current"
else
  echo "bindings/java: $committed is not current: run bindings/java/generate.sh" >&2
  diff -ru "$committed" "$tmp/scripts" | head -20 >&2 || true
  exit 1
fi
