"""Test-suite set-up.

Locust patches the standard library with gevent when it is imported. Import it first,
as a real Locust process does, so every test runs in the same (patched) world; servers
under test run as child processes.
"""

from __future__ import annotations

import os
import tempfile

import locust  # noqa: F401  (must come first: gevent monkey-patching)

# Runs started by tests (in-process and child processes, which inherit this) do not bind
# the exporter's fixed port 9646, so test sessions never collide on it; the exporter's own
# tests turn it back on for their runs.
os.environ.setdefault("LLMLOAD_NO_EXPORTER", "true")
# Nor do they write run directories into the checkout's runs/ (a test's own --runs-dir wins).
os.environ.setdefault("LLMLOAD_RUNS_DIR", tempfile.mkdtemp(prefix="llmload-test-runs-"))


import pytest  # noqa: E402

from llmload import redact  # noqa: E402


@pytest.fixture(autouse=True)
def _forget_api_keys():
    """The keys a test's configuration remembered for masking (llmload.redact) do not outlive it."""
    yield
    redact.forget()
