"""llama.cpp's ``llama-server`` as a child process on 127.0.0.1, for tests and benchmarks.

:func:`binary` is where ``tests/engines/build_llama_server.sh`` (run by ``make test``) puts
the server; :func:`llama_server` starts it on a free port with one thread (with all cores,
llama.cpp's spinning threads collapse when the load generator wants one: see
docs/real_engines.md), waits for ``GET /health``, yields a :class:`LlamaServer` and stops it
by PID. Everything the server prints goes to a log file, which :meth:`LlamaServer.timings`
reads back: the server's own per-request ``prompt eval`` / ``eval`` times.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.engines.make_gguf import cache_dir
from tests.helpers.ports import free_port as _free_port

__all__ = ["BUILD", "LlamaServer", "binary", "llama_server", "missing_reason", "scrape_metrics"]

BUILD = "b11434"


def binary() -> Path:
    return cache_dir() / f"llama-server-{BUILD}" / "llama-server"


def missing_reason() -> str | None:
    """Why the tests cannot run here (no binary), or None."""
    if binary().is_file() and os.access(binary(), os.X_OK):
        return None
    return (
        f"llama-server {BUILD} is not built ({binary()} missing): run `make llama-server` "
        "(or `make test`, which builds it first)"
    )



# llama.cpp's print_timing() lines, one pair per finished request (tools/server, this build):
#   prompt eval time =      12.34 ms /    50 tokens (    0.25 ms per token,  4051.86 tokens per second)
#          eval time =     240.00 ms /    64 tokens (    3.75 ms per token,   266.67 tokens per second)
_PROMPT = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_EVAL = re.compile(r"(?<!prompt )eval time =\s*([\d.]+) ms /\s*(\d+) tokens \(\s*([\d.]+) ms per token")


@dataclass
class LlamaServer:
    url: str
    pid: int
    log: Path
    model: Path
    alias: str

    def get(self, path: str, timeout: float = 5.0) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
            return r.read()

    def timings(self) -> list[dict]:
        """The server's per-request timings so far, from its log: prompt_ms, prompt_n, predicted_ms,
        predicted_n, predicted_per_token_ms (the same figures as the stream's ``timings``)."""
        out, prompt = [], None
        for line in self.log.read_text(errors="replace").splitlines():
            m = _PROMPT.search(line)
            if m:
                prompt = (float(m.group(1)), int(m.group(2)))
                continue
            m = _EVAL.search(line)
            if m and prompt is not None:
                out.append(
                    {
                        "prompt_ms": prompt[0],
                        "prompt_n": prompt[1],
                        "predicted_ms": float(m.group(1)),
                        "predicted_n": int(m.group(2)),
                        "predicted_per_token_ms": float(m.group(3)),
                    }
                )
                prompt = None
        return out


def scrape_metrics(url: str) -> dict[str, float]:
    """``llamacpp:*`` samples of ``/metrics`` (names as written, e.g. ``llamacpp:tokens_predicted_total``)."""
    with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("llamacpp:"):
            name, _, value = line.partition(" ")
            out[name] = float(value)
    return out


@contextmanager
def llama_server(
    model: Path, *, alias: str = "tiny", parallel: int = 8, ctx_size: int = 16384, log_dir: Path, extra: tuple = ()
) -> Iterator[LlamaServer]:
    """Start llama-server on a free 127.0.0.1 port; stop it by PID at the end."""
    reason = missing_reason()
    if reason:
        raise RuntimeError(reason)
    port = _free_port()
    log = Path(log_dir) / f"llama-server-{port}.log"
    cmd = [
        str(binary()), "--model", str(model), "--alias", alias, "--host", "127.0.0.1", "--port", str(port),
        "--parallel", str(parallel), "--ctx-size", str(ctx_size), "--threads", "1", "--threads-batch", "1",
        "--metrics", "--no-webui", *extra,
    ]  # fmt: skip
    with open(log, "wb") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if p.poll() is not None:
                tail = log.read_text(errors="replace")[-1500:]
                raise RuntimeError(f"llama-server exited with {p.returncode} before it was healthy:\n{tail}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama-server not healthy after 60 s (log: {log})")
            time.sleep(0.1)
        yield LlamaServer(url, p.pid, log, Path(model), alias)
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
