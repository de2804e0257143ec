#!/usr/bin/env bash
# Server time per decision, native vs script, read from the server itself (INFO commandstats
# usec_per_call, and INFO cpu for decisions per server-CPU-second), with the server and the load
# generator pinned to separate cores. Every run is bounded (-n requests).
#
#   bench/commandstats.sh MODULE.so REDIS_ATOMIC_CLI [SERVER_BIN] [REQUESTS]
#
# Prints one line per decision and path: command, requests, usec_per_call, decisions per
# server-CPU-second. Figures belong in docs/performance.md with the machine and the ratio.
set -euo pipefail
so=$(realpath "$1") cli=$2 bin=${3:-redis-server} n=${4:-200000}
port=$((20000 + RANDOM % 20000))
dir=$(mktemp -d)
taskset -c 0 "$bin" --port "$port" --save "" --appendonly no --dir "$dir" --loadmodule "$so" \
  --daemonize no >"$dir/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
cpu() { redis-cli -p "$port" info cpu | awk -F: '/used_cpu_(sys|user):/ {s += $2} END {printf "%.6f", s}'; }
run() { # label command... (redis-benchmark substitutes __rand_int__)
  local label=$1; shift
  redis-cli -p "$port" config resetstat >/dev/null
  local before; before=$(cpu)
  taskset -c 1 redis-benchmark -p "$port" -n "$n" -c 50 -P 16 -r 100000 -q "$@" >/dev/null
  local after; after=$(cpu)
  local cmd; cmd=$(echo "$1" | tr 'A-Z' 'a-z')
  local usec; usec=$(redis-cli -p "$port" info commandstats | tr -d '\r' |
    awk -F'[:=,]' -v c="cmdstat_$cmd" '$1 == c {print $7}')
  awk -v l="$label" -v n="$n" -v u="$usec" -v b="$before" -v a="$after" \
    'BEGIN {printf "%-34s %8d  %6s us/call  %9.0f decisions/server-cpu-s\n", l, n, u, n / (a - b)}'
}
for script in rl_fixed_window rl_anchored_window lock_acquire rl_gcra; do
  sha=$(redis-cli -p "$port" script load "$("$cli" scripts show "$script")")
  case $script in
    rl_fixed_window) keys=(1 "fw:__rand_int__"); args=(1 1000000000 60000000 1 "") ;;
    rl_anchored_window) keys=(1 "aw:__rand_int__"); args=(1 1000000000 60000) ;;
    lock_acquire) keys=(2 "{l__rand_int__}:lock" "{l__rand_int__}:fence"); args=(t1 30000) ;;
    rl_gcra) keys=(1 "gcra:__rand_int__"); args=(1 1000000000 60000000 1000 "") ;;
  esac
  run "$script script (EVALSHA)" EVALSHA "$sha" "${keys[@]}" "${args[@]}"
  native=$(echo "ratomic.$script" | tr 'a-z' 'A-Z')
  run "$script native" "$native" "${keys[@]:1}" "${args[@]}"
done
