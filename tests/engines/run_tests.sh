#!/usr/bin/env bash
# `make test`: the whole suite, with the llama-server build overlapping the tests that do not need it.
#
# On a fresh machine the build takes 4-10 min of two cores, the rest of the suite ~8 min of mostly
# waiting (timed load runs). Run one after the other they would take the sum; here the build runs
# at the lowest CPU priority (nice 19: the tests get the cores whenever they want them, so their
# timings are not disturbed) while every test not marked `llamacpp` runs, then the llama-server
# tests run on the finished binary. A cached binary (a later `make test`) makes the build a no-op.
# Usage: run_tests.sh PYTHON [pytest args...]
set -uo pipefail
PY=$1
shift
cd "$(dirname "$0")/../.."
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

nice -n 19 bash tests/engines/build_llama_server.sh "$PY" >"$LOG" 2>&1 &
build=$!
"$PY" -m pytest -q --durations=10 -m "not llamacpp" "$@"
rc_rest=$?
wait "$build"
rc_build=$?
cat "$LOG" >&2
if [ "$rc_build" -ne 0 ]; then
  echo "llama-server could not be built: the llamacpp tests did not run (see the line above)" >&2
  exit 1
fi
"$PY" -m pytest -q -m llamacpp "$@"
rc_llama=$?
ok() { [ "$1" -eq 0 ] || [ "$1" -eq 5 ]; }  # 5: pytest selected nothing (e.g. paths given with no llamacpp test)
ok "$rc_rest" && ok "$rc_llama"
