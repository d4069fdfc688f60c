"""Integration harness: real servers as child processes, real Locust runs.

* :func:`sim` starts the embedded simulator (``python -m llmload.sim``) on a free port.
* :func:`faulty` starts ``tests/servers/faulty.py`` (mode = the request's model name).

Runs themselves are in :mod:`tests.helpers.harness`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import gevent
import pytest

from llmload.sim import start_sim_process

ROOT = Path(__file__).resolve().parents[2]
_URL = re.compile(r"listening on (http://\S+)")


@contextmanager
def child_server(cmd: list[str], timeout: float = 15.0):
    """Start a server that prints 'listening on URL'; yield the URL; stop it by PID."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    try:
        with gevent.Timeout(timeout, RuntimeError(f"{cmd} did not start")):
            for line in p.stdout:
                m = _URL.search(line)
                if m:
                    break
            else:
                raise RuntimeError(f"{cmd} exited: {p.wait()}")
        yield m.group(1)
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
        p.stdout.close()


@pytest.fixture(scope="session")
def faulty():
    with child_server([sys.executable, str(ROOT / "tests/servers/faulty.py"), "--port", "0"]) as url:
        yield url


@pytest.fixture
def sim():
    """Factory: ``sim("--preset", "healthy", ttft_ms=50)`` → base URL; stopped at test end.

    Positional arguments are passed as they are (flags without a value too); keyword
    arguments become ``--key-name value``.
    """
    procs = []

    def start(*flags: str, **options):
        args = [*flags]
        for k, v in options.items():
            args += [f"--{k.replace('_', '-')}", str(v)]
        proc = start_sim_process(["--port", "0", *args], timeout=20)
        procs.append(proc)
        return proc.url

    yield start
    for p in procs:
        p.stop()


@pytest.fixture(autouse=True)
def _own_master_port(monkeypatch):
    """Every test's ``--processes`` master on a port of its own, not Locust's fixed 5557.

    Runs that do not name ``--master-bind-port``/``--master-port`` read Locust's environment variables (the
    flags still win): two suites on one box, or a run still ending beside the next test, held 5557 and the
    next ``--processes`` run stopped at its pre-check ("Address already in use"), seen with two fresh-clone
    ``make test`` runs side by side. In-process runs are unaffected.
    """
    from tests.helpers.ports import free_port

    port = str(free_port())
    monkeypatch.setenv("LOCUST_MASTER_BIND_PORT", port)  # --processes' forked workers follow the bind port
