#!/usr/bin/env bash
# `make test`: the whole suite, with the slow phases that do not disturb each other overlapped.
#
# On a fresh machine the llama-server build takes 4-10 min of two cores, the integration tests
# ~14 min of mostly waiting (timed load runs), the unit tests ~40 s of one core, the llama.cpp
# tests ~2 min. Run one after the other they would take the sum. Here:
#   * the integration tests (not `llamacpp`) run in the foreground at normal priority;
#   * beside them, at the lowest CPU priority (nice 19: the timed tests get the cores whenever
#     they want them, so their timings are not disturbed), the unit tests (every test outside
#     tests/integration: CPU only, fake clocks; their output is shown at the end) and the
#     llama-server build, then the test models (tests/engines/make_gguf.py, ~5 s);
#   * then the `llamacpp` tests, alone on the box (real-time runs against a CPU engine on one
#     thread: a ladder's 1-user step holds too few requests when the box is twice oversubscribed).
# A cached binary (a later `make test`) makes the build a no-op.
# Usage: run_tests.sh PYTHON [pytest args...]   (with pytest args: one stream after the other,
# so that `run_tests.sh PY tests/integration/test_x.py` runs just that)
set -uo pipefail
PY=$1
shift
cd "$(dirname "$0")/../.."
BUILD_LOG=$(mktemp)
UNIT_LOG=$(mktemp)
LLAMA_LOG=$(mktemp)
trap 'rm -f "$BUILD_LOG" "$UNIT_LOG" "$LLAMA_LOG"' EXIT

ok() { [ "$1" -eq 0 ] || [ "$1" -eq 5 ]; }  # 5: pytest selected nothing (e.g. paths given with no llamacpp test)
build_failed() {
  echo "llama-server could not be built: the llamacpp tests did not run (see the line above)" >&2
}

if [ $# -gt 0 ]; then
  nice -n 19 bash tests/engines/build_llama_server.sh "$PY" >"$BUILD_LOG" 2>&1 &
  build=$!
  "$PY" -m pytest -q --durations=10 -m "not llamacpp" "$@"
  rc_rest=$?
  wait "$build"
  rc_build=$?
  cat "$BUILD_LOG" >&2
  [ "$rc_build" -eq 0 ] || { build_failed; exit 1; }
  "$PY" -m pytest -q -m llamacpp "$@"
  rc_llama=$?
  ok "$rc_rest" && ok "$rc_llama"
  exit
fi

start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

# Beside the integration tests, at nice 19: the build and the models; the unit tests.
(
  nice -n 19 bash tests/engines/build_llama_server.sh "$PY" || exit 90
  echo "llama-server ready at $(elapsed)"
  nice -n 19 "$PY" -m tests.engines.make_gguf tiny 88m >/dev/null || echo "making the test models failed: the llamacpp tests make them again"
) >"$BUILD_LOG" 2>&1 &
build=$!
nice -n 19 "$PY" -m pytest -q -p no:cacheprovider --durations=5 -m "not llamacpp" --ignore=tests/integration tests \
  >"$UNIT_LOG" 2>&1 &
unit=$!

"$PY" -m pytest -q --durations=10 -m "not llamacpp" tests/integration
rc_integration=$?
echo "integration tests done at $(elapsed)"

wait "$unit"
rc_unit=$?
echo "== unit tests (beside the integration tests, nice 19) =="
cat "$UNIT_LOG"

wait "$build"
rc_build=$?
cat "$BUILD_LOG" >&2
if [ "$rc_build" -ne 0 ]; then
  build_failed
  exit 1
fi
echo "== llama.cpp tests (from $(elapsed)) =="
# Only tests/integration is collected (the llamacpp tests live there): collecting the unit tests too took ~6 s.
"$PY" -m pytest -q --durations=5 -m llamacpp tests/integration
rc_llama=$?
ok "$rc_integration" && ok "$rc_unit" && ok "$rc_llama"
