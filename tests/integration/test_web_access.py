"""Who can reach what: ``--web-auth`` on every web UI route, the start form checked before a test,
``--web-login`` without a handler refused, and the master bound to 127.0.0.1 under ``--processes``.

Real ``llmload run`` processes against the simulator; ports on 127.0.0.1, stopped by PID.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.harness import ROOT
from tests.integration.test_web_ui import free_port, stop_process
from tests.integration.test_web_ui_secrets import PAGES

pytestmark = pytest.mark.integration

AUTH = "Basic " + base64.b64encode(b"admin:s3cret-pw").decode()


def _get(url: str, auth: str | None = None, data: bytes | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=data, headers={"Authorization": auth} if auth else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with log.open("w") as f:
        return subprocess.Popen([sys.executable, "-m", "llmload", "run", *args], stdout=f, stderr=subprocess.STDOUT,
                                cwd=ROOT)  # fmt: skip


def _wait(url: str, proc: subprocess.Popen, log: Path, auth: str | None = None, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"llmload exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if _get(url, auth)[0] in (200, 401):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"no answer at {url}:\n{log.read_text()[-3000:]}")


@pytest.fixture
def web(sim, tmp_path):
    """A web-UI llmload with --web-auth; yields (base URL, the simulator's URL)."""
    url, port = sim(), free_port()
    log = tmp_path / "llmload.log"
    proc = _start(["--host", url, "--web-host", "127.0.0.1", "--web-port", str(port), "--web-auth", "admin:s3cret-pw",
                   "--exporter-port", "0", "--no-run-dir", "--max-tokens-cap", "8"], log)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(base + "/", proc, log)
        yield base, url
    finally:
        stop_process(proc)
    assert "s3cret-pw" not in log.read_text()


def test_every_route_needs_the_password(web):
    base, _ = web
    for page in PAGES:
        code, _ = _get(base + page)
        assert code == 401, page
        code, _ = _get(base + page, "Basic " + base64.b64encode(b"admin:wrong").decode())
        assert code == 401, page
        code, body = _get(base + page, AUTH)
        assert code in (200, 404), (page, body[:200])  # 404: full history not enabled
        assert b"s3cret-pw" not in body
    assert _get(base + "/swarm", data=b"user_count=1&spawn_rate=1")[0] == 401


def _swarm(base: str, **fields: str) -> dict:
    data = urllib.parse.urlencode({"user_count": "1", "spawn_rate": "1", **fields}).encode()
    code, body = _get(base + "/swarm", AUTH, data)
    assert code == 200, body[:300]
    return json.loads(body)


def test_the_start_form_is_checked_and_the_error_shown(web, tmp_path):
    base, url = web
    cases = [
        ({"step_time": "abc"}, "--step-time 'abc'"),
        ({"user_count": "abc"}, "-u/--users 'abc': must be a whole number"),
        ({"user_count": "-2"}, "-u/--users -2: must be >= 0"),
        ({"error_backoff": "5s:1s"}, "--error-backoff 5s:1s"),
        ({"host": "127.0.0.1:1"}, "--host 127.0.0.1:1: needs http:// or https://"),
        ({"host": f"http://127.0.0.1:{free_port()}"}, "cannot connect to 127.0.0.1"),
        ({"max_tokens_cap": "lots"}, "--max-tokens-cap 'lots': must be a whole number"),
        ({"ladder": "5,1"}, "--ladder '5,1': user counts must increase from step to step"),
        ({"slo": "ttft_ms=fast"}, "--slo 'ttft_ms=fast': ttft_ms='fast' must be a number of milliseconds"),
        ({"extra_body": '{"top_p": '}, "--extra-body: not valid JSON"),
        ({"profile": "no-such-profile.toml"}, "profile 'no-such-profile.toml': no such file"),
    ]
    for fields, message in cases:
        answer = _swarm(base, host=url, **fields) if "host" not in fields else _swarm(base, **fields)
        assert answer["success"] is False, (fields, answer)
        assert message in answer["message"], (fields, answer)
    code, body = _get(base + "/stats/requests", AUTH)
    assert json.loads(body)["state"] in ("ready", "stopped")  # nothing started
    ok = _swarm(base, host=url)
    assert ok["success"] is True, ok
    _get(base + "/stop", AUTH)


def test_web_login_without_a_handler_is_one_line(sim, tmp_path):
    log = tmp_path / "llmload.log"
    proc = _start(["--host", sim(), "--web-host", "127.0.0.1", "--web-port", str(free_port()), "--web-login",
                   "--exporter-port", "0"], log)  # fmt: skip
    try:
        code = proc.wait(30)
    finally:
        stop_process(proc)
    out = log.read_text()
    assert code == 2
    errors = [line for line in out.splitlines() if line.startswith("llmload: error:")]
    assert len(errors) == 1 and "--web-login needs a login handler" in errors[0] and "--web-auth" in errors[0], out


def _listening(port: int) -> set[str]:
    """Local addresses listening on ``port`` (from /proc/net/tcp)."""
    out = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        addr, p = local.split(":")
        if int(p, 16) == port and state == "0A":
            out.add(".".join(str(int(addr[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return out


@pytest.mark.parametrize(("extra", "expected"), [([], {"127.0.0.1"}), (["--master-bind-host", "0.0.0.0"], {"0.0.0.0"})])
def test_the_master_binds_locally_under_processes(sim, tmp_path, extra, expected):
    port = free_port()
    log = tmp_path / "llmload.log"
    # -t 2s: the master binds at start-up and lives through its worker's start and the run, seconds to look
    proc = _start(["--headless", "--processes", "1", "-u", "1", "-r", "1", "-t", "2s", "--host", sim(),
                   "--master-bind-port", str(port), "--master-port", str(port), "--exporter-port", "0", "--no-run-dir", "--only-summary", *extra],
                  log)  # fmt: skip
    try:
        seen: set[str] = set()
        deadline = time.monotonic() + 20
        while not seen and time.monotonic() < deadline and proc.poll() is None:
            seen = _listening(port)
            time.sleep(0.1)
        assert seen == expected, log.read_text()[-3000:]
        assert proc.wait(30) == 0, log.read_text()[-3000:]
    finally:
        stop_process(proc)
