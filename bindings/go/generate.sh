#!/bin/sh
# Regenerates internal/scripts/scripts_gen.go (the typed script layer) from the built-in scripts'
# headers, with the repository's own CLI. `generate.sh --check` writes nothing and fails when the
# committed file is not what the CLI generates now (make test runs it).
#   REDIS_ATOMIC_BIN: the CLI to use (default: built with cargo, target/debug/redis-atomic).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$here/internal/scripts/scripts_gen.go"
bin=${REDIS_ATOMIC_BIN:-}
if [ -z "$bin" ]; then
  (cd "$root" && cargo build -q -p redis-atomic-cli)
  bin="${CARGO_TARGET_DIR:-$root/target}/debug/redis-atomic"
fi
# gofmt'd, as every Go file of the module (the generator does not align struct fields).
gen() { "$bin" scripts bindings --lang go --package scripts --builtin --out "$1" && gofmt -w "$1"; }
if [ "${1:-}" = "--check" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  gen "$tmp/scripts_gen.go"
  if ! cmp -s "$tmp/scripts_gen.go" "$out"; then
    echo "bindings/go: $out is not current: run bindings/go/generate.sh" >&2
    diff -u "$out" "$tmp/scripts_gen.go" | head -20 >&2 || true
    exit 1
  fi
  echo "bindings/go: scripts_gen.go is current"
else
  gen "$out"
fi
