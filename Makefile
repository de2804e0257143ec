# redis-atomic: the two commands of the quick start, plus helpers.
#   make run   build and run `redis-atomic verify` on an embedded redis-server (the main job)
#   make test  everything CI runs: fmt, clippy -D warnings, all tests (standalone + cluster)
CARGO ?= cargo
SERVER_HINT = redis-server is missing: install Debian's redis-server package (apt-get install redis-server) or set REDIS_ATOMIC_SERVER_BIN

.PHONY: run test ensure-redis build scripts-lock bench

ensure-redis:
	@if [ -n "$$REDIS_ATOMIC_SERVER_BIN" ] || command -v redis-server >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's redis-server package"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null; \
	else echo "$(SERVER_HINT)"; exit 1; fi

build:
	$(CARGO) build --release -p redis-atomic-cli

run: ensure-redis build
	./target/release/redis-atomic verify

test: ensure-redis
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test --workspace


# After bumping a script's `--- version:` (and scripts/library.version), record the new SHA1s.
scripts-lock:
	UPDATE_SCRIPTS_LOCK=1 $(CARGO) test -q -p redis-atomic --test scripts scripts_lock_is_current

bench: ensure-redis
	$(CARGO) bench -p redis-atomic --bench lock
