"""The simulator as a child process: start it, wait until it answers, stop it by PID.

``start_sim_process`` runs ``python -m llmload.sim`` with the given settings, reads
the URL it prints on start-up (so port 0 = a free port is race-free), polls
``/health`` until it answers, and returns a :class:`SimProcess` context manager that
terminates the child on exit: SIGTERM, then SIGKILL after a grace period. On Linux
the child also gets SIGTERM if the thread that started it dies (``PR_SET_PDEATHSIG``),
so a killed test run does not leave simulators behind (``die_with_parent=False`` to opt out).
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import os
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from llmload.errors import LlmloadError
from llmload.sim.config import API_KEY_ENV, SimConfig, config_to_args

__all__ = ["SimProcess", "SimStartError", "start_sim_process"]

_URL = re.compile(rb"listening on (http://\S+)")
_PR_SET_PDEATHSIG = 1


class SimStartError(LlmloadError):
    """The simulator process exited or did not become healthy in time."""


class SimProcess:
    """A running simulator child process; ``url`` is its base URL (``http://host:port``)."""

    def __init__(self, popen: subprocess.Popen[bytes], url: str = "") -> None:
        self.popen = popen
        self.url = url
        self._drainer: threading.Thread | None = None

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def port(self) -> int:
        return urlsplit(self.url).port or 80

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 5.0) -> int:
        """SIGTERM, wait ``grace`` seconds, then SIGKILL; returns the exit status."""
        p = self.popen
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGTERM)
            try:
                p.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGKILL)
                p.wait()
        if self._drainer is not None:  # it ends at EOF, now that the child is gone
            self._drainer.join(1.0)
        if p.stdout is not None and (self._drainer is None or not self._drainer.is_alive()):
            p.stdout.close()
        return p.returncode

    def __enter__(self) -> SimProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_sim_process(
    config_or_args: SimConfig | Sequence[str] | None = None,
    timeout: float = 10.0,
    *,
    die_with_parent: bool = True,
) -> SimProcess:
    """Start ``python -m llmload.sim`` and wait until ``/health`` answers.

    ``config_or_args``: a :class:`SimConfig` (its ``port`` is used as is; 0 = free
    port), or a list of command-line flags (``--port 0`` is added when absent), or
    ``None`` (defaults on a free port). Raises :class:`SimStartError` when the child
    exits or is not healthy within ``timeout`` seconds (the child is then killed).
    ``die_with_parent`` (Linux): the child gets SIGTERM when the *thread* that started
    it exits; pass False when starting it from a short-lived thread.
    """
    env = dict(os.environ)
    if config_or_args is None:
        args = ["--port", "0"]
    elif isinstance(config_or_args, SimConfig):
        args = config_to_args(config_or_args)
        if config_or_args.api_key:
            env[API_KEY_ENV] = config_or_args.api_key  # not on the command line
    else:
        args = list(config_or_args)
        if not any(a == "--port" or a.startswith("--port=") for a in args):
            args += ["--port", "0"]
    root = str(Path(__file__).resolve().parents[2])  # the directory holding the llmload package
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    popen = subprocess.Popen(
        [sys.executable, "-m", "llmload.sim", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        env=env,
        preexec_fn=_die_with_parent_hook() if die_with_parent else None,
    )
    proc = SimProcess(popen)
    try:
        deadline = time.monotonic() + timeout
        proc.url = _read_url(popen, deadline)
        _wait_healthy(proc, deadline)
    except BaseException:
        proc.stop(grace=1.0)
        raise
    proc._drainer = threading.Thread(target=_drain, args=(popen,), name=f"sim-{popen.pid}-stdout", daemon=True)
    proc._drainer.start()
    return proc


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` that asks Linux to SIGTERM the child when the parent thread exits.

    ``prctl`` is looked up here, in the parent: the hook itself only makes one C call
    (no import, no lock) between fork and exec.
    """
    if sys.platform != "linux":
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    sig = int(signal.SIGTERM)
    return lambda: prctl(_PR_SET_PDEATHSIG, sig)


def _read_url(popen: subprocess.Popen[bytes], deadline: float) -> str:
    assert popen.stdout is not None
    fd = popen.stdout.fileno()
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SimStartError(
                    f"simulator (pid {popen.pid}) printed no URL in time; output so far: {buf[-200:]!r}"
                )
            if not sel.select(left):
                continue
            data = os.read(fd, 4096)
            if not data:
                code = popen.wait()
                raise SimStartError(f"simulator exited with status {code} before listening (see its stderr above)")
            buf += data
            m = _URL.search(buf)
            if m is not None:
                return m.group(1).decode()


def _wait_healthy(proc: SimProcess, deadline: float) -> None:
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not proc.alive():
            raise SimStartError(f"simulator exited with status {proc.popen.returncode}")
        conn = http.client.HTTPConnection(proc.host, proc.port, timeout=1.0)
        try:
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError as e:
            last = e
        finally:
            conn.close()
        time.sleep(0.05)
    raise SimStartError(f"simulator at {proc.url} not healthy in time ({last})")


def _drain(popen: subprocess.Popen[bytes]) -> None:
    """Keep reading the child's stdout so that it never blocks on a full pipe."""
    with contextlib.suppress(OSError, ValueError):
        assert popen.stdout is not None
        while popen.stdout.read1(65536):  # type: ignore[attr-defined]
            pass
