"""Pre-flight: the checks that run before any load, each failing with one line.

A wrong flag found after the load is a wasted test (``--summary-json`` into a missing
folder was reported after a 10-minute run); a target that cannot be reached turns the
whole ``-t`` into connection errors. Each check here raises
:class:`~llmload.errors.ConfigError` with what is wrong, where, and how to fix it; the
caller prints it and exits with code 2 before a request is sent.

* :func:`check_host` — the URL has a scheme and a host;
* :func:`check_reachable` — a TCP connect to it succeeds (``--no-preflight`` skips it);
* :func:`check_models` — ``GET /v1/models`` does not reject the API key and, when it
  lists models, lists the one asked for (a 404 is fine: many gateways lack the route);
* :func:`check_output_file` / :func:`check_output_dir` — an output can be written;
* :func:`check_port_free` — a port this process will listen on is free;
* :func:`check_range` — a number is within its range.

Pure apart from the one socket, file or HTTP operation each check is about.
"""

from __future__ import annotations

import json
import os
import re
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from llmload.config.values import basic_auth
from llmload.errors import ConfigError

__all__ = [
    "check_host",
    "check_models",
    "check_output_dir",
    "check_output_file",
    "check_port_free",
    "check_range",
    "check_reachable",
]

_SKIP = "(--no-preflight skips this check)"


def _shown(host: str) -> str:
    """``host`` as an error line may show it: without a user:password (even in a URL too broken to parse)."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://|)[^/@]*@", r"\1", host)


def check_host(host: str | None) -> tuple[str, int]:
    """``(hostname, port)`` of ``--host``; ConfigError when it is missing or not an http(s) URL."""
    if not host:
        raise ConfigError("--host is missing: pass the server's base URL, e.g. --host http://127.0.0.1:8000")
    parts = urlsplit(host)
    if parts.scheme not in ("http", "https"):
        hint = host if "://" not in host else host.split("://", 1)[1]
        raise ConfigError(f"--host {_shown(host)}: needs http:// or https://, e.g. --host http://{_shown(hint)}")
    if not parts.hostname:
        raise ConfigError(f"--host {_shown(host)}: no host name in the URL, e.g. --host http://127.0.0.1:8000")
    try:
        port = parts.port
    except ValueError:
        raise ConfigError(f"--host {_shown(host)}: the port is not a number in 1..65535") from None
    return parts.hostname, port or (443 if parts.scheme == "https" else 80)


def check_reachable(host: str, timeout: float = 5.0) -> None:
    """A TCP connection to ``--host`` can be opened."""
    name, port = check_host(host)
    try:
        socket.create_connection((name, port), timeout=timeout).close()
    except OSError as e:
        reason = e.strerror or type(e).__name__
        if isinstance(e, socket.timeout):
            reason = f"no answer within {timeout:g}s"
        raise ConfigError(
            f"--host {_shown(host)}: cannot connect to {name}:{port} ({reason}); is the server running there? {_SKIP}"
        ) from None


def check_models(host: str, model: str, headers: Mapping[str, str], timeout: float = 5.0) -> str | None:
    """``GET {host}/v1/models``: ConfigError if the key is refused; a warning text if ``model`` is not listed."""
    base, auth = basic_auth(host)  # the URL's user:password: sent as the load sends them, never shown
    url = base.rstrip("/") + "/v1/models"
    req = urllib.request.Request(url, headers={"Accept": "application/json", **headers, **auth})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as e:
        if e.code in (401, 403):
            raise ConfigError(
                f"{url} answered HTTP {e.code}: the server refuses the API key; check --api-key / $LLMLOAD_API_KEY / "
                f"$OPENAI_API_KEY ($ANTHROPIC_API_KEY for --api anthropic-messages) {_SKIP}"
            ) from None
        return None  # no such route (404), or a gateway that does not serve it
    except (urllib.error.URLError, OSError, ValueError):
        return None  # reachable was checked; a broken /v1/models does not stop a test
    listed = [m.get("id") for m in body.get("data", []) if isinstance(m, dict)] if isinstance(body, dict) else []
    if model and listed and model not in listed:
        shown = ", ".join(str(m) for m in listed[:5]) + (" ..." if len(listed) > 5 else "")
        return f"--model {model} is not among the models {url} lists ({shown}); requests may fail"
    return None


def check_output_file(flag: str, path: str | os.PathLike[str] | None) -> None:
    """The folder of an output file exists and is writable."""
    if not path:
        return
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{flag} {path}: is a folder; give a file name, e.g. {flag} {p / 'out.json'}")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise ConfigError(f"{flag} {path}: the folder {folder} does not exist; create it or choose another path")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"{flag} {path}: the folder {folder} is not writable")


def check_output_dir(flag: str, path: str | os.PathLike[str] | None) -> None:
    """An output folder exists and is writable, or can be made in an existing writable folder."""
    if not path:
        return
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ConfigError(f"{flag} {path}: is a file, not a folder")
    target = p if p.is_dir() else p.parent if str(p.parent) else Path(".")
    if not target.is_dir():
        raise ConfigError(f"{flag} {path}: neither it nor its parent {target} exists; create it or choose another")
    if not os.access(target, os.W_OK):
        raise ConfigError(f"{flag} {path}: {target} is not writable")


def check_port_free(flag: str, host: str, port: int) -> None:
    """Nothing listens on ``host:port`` yet (port 0 = any free port: nothing to check); a port whose last
    connections are only in TIME_WAIT is free."""
    if not port:
        return
    bind_host = "" if host in ("*", "0.0.0.0", "") else host
    family = socket.AF_INET6 if ":" in bind_host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        # As the servers that will bind it do (ZeroMQ, gevent): connections of a run that just ended,
        # in TIME_WAIT, do not hold the port (without it a rerun within a minute read "in use").
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((bind_host, port))
        except OSError as e:
            raise ConfigError(
                f"{flag} {port}: cannot listen on {host or '*'}:{port} ({e.strerror}); another process uses it: "
                f"stop it or choose another {flag}"
            ) from None


def check_range(flag: str, value: float | int | None, low: float, high: float | None = None, hint: str = "") -> None:
    """``low <= value <= high`` (``None`` value: not given, nothing to check)."""
    if value is None:
        return
    if value < low or (high is not None and value > high):
        bound = f">= {low:g}" if high is None else f"in {low:g}..{high:g}"
        raise ConfigError(f"{flag} {value:g}: must be {bound}" + (f"; {hint}" if hint else ""))
