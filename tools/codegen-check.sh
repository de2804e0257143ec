#!/usr/bin/env bash
# Proof that `redis-atomic scripts bindings` emits code that compiles and decodes right: generates
# the TypeScript, Java and Go layers of the built-ins and of examples/user-scripts into
# target/codegen-check/, compiles them (tsc --strict, javac -Xlint:all -Werror, go vet + go build),
# then feeds the `replies` section of conformance/vectors.json to the generated Go and TypeScript
# decoders (every case: the expected outcome word and fields, or a failure for a malformed reply).
# The Java layer's decoders run the same vectors in bindings/java (ConformanceTest, with Jackson as a
# test dependency: the JDK has no JSON parser). Usage: tools/codegen-check.sh [BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-${CARGO_TARGET_DIR:-target}/debug/redis-atomic}
TSC=bindings/node/node_modules/.bin/tsc
OUT=target/codegen-check
rm -rf "$OUT" && mkdir -p "$OUT"
for set in builtin user; do
	src=(--builtin); [ $set = user ] && src=(examples/user-scripts)
	mkdir -p "$OUT/$set/ts" "$OUT/$set/go"
	"$BIN" scripts bindings --lang ts --out "$OUT/$set/ts/scripts.ts" "${src[@]}"
	"$BIN" scripts bindings --lang go --package scripts --out "$OUT/$set/go/scripts.go" "${src[@]}"
	"$BIN" scripts bindings --lang java --package "cg.$set" --out "$OUT/$set/java/src" "${src[@]}"
	"$TSC" --strict --target es2022 --module es2022 --outDir "$OUT/$set/ts/js" "$OUT/$set/ts/scripts.ts"
	javac -Xlint:all -Werror -d "$OUT/$set/java/classes" "$OUT/$set/java/src"/*.java
	printf 'module example.com/cg\n\ngo 1.22\n' > "$OUT/$set/go/go.mod"
	(cd "$OUT/$set/go" && go vet ./... && go build ./...)
	echo "codegen-check: $set compiles (ts, java, go)"
done
cp tools/codegen-check/vectors_test.go "$OUT/builtin/go/"
(cd "$OUT/builtin/go" && REDIS_ATOMIC_VECTORS="$PWD/../../../../conformance/vectors.json" go test -count=1 ./...)
node tools/codegen-check/vectors.mjs "$OUT/builtin/ts/js/scripts.js" conformance/vectors.json
echo "codegen-check: passed"
