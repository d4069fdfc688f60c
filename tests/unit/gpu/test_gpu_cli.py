"""``python -m llmload.gpu`` in a child process: exit codes, one-line errors, --allow-missing, no Locust.

This machine has ``nvidia-ml-py`` (the dev extra) and no NVIDIA driver, so the real
``pynvml.nvmlInit()`` raises ``NVMLError_LibraryNotFound``: the no-GPU paths run for real.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from llmload.gpu import INSTALL_HINT, names
from tests.helpers.gpu import parse, samples
from tests.helpers.ports import free_port

ROOT = Path(__file__).resolve().parents[3]



def run(*args: str, code: str | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "llmload.gpu", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def start(*args: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llmload.gpu", "--host", "127.0.0.1", "--port", str(port), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return proc, url
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    out, err = proc.communicate()
    raise AssertionError(f"sidecar did not start (rc {proc.returncode}): {err}")


def stop(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    return proc.returncode, err


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return parse(resp.read().decode())


def test_without_a_driver_one_clear_line_and_exit_3():
    p = run("--port", str(free_port()))
    assert p.returncode == 3
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("llmload gpu-sidecar: no usable GPU: NVML cannot start (NVML Shared Library Not Found)")
    assert "libnvidia-ml.so.1 not found" in lines[0]
    assert "--allow-missing" in lines[0]


def test_without_nvidia_ml_py_the_line_says_what_to_install():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["pynvml"] = None  # as if nvidia-ml-py were not installed
        from llmload.gpu.__main__ import main
        sys.exit(main(["--port", "0"]))
        """
    )
    p = run(code=code)
    assert p.returncode == 3
    assert len(p.stderr.splitlines()) == 1, p.stderr
    assert INSTALL_HINT in p.stderr


def test_allow_missing_keeps_serving_and_says_why():
    proc, url = start("--allow-missing")
    try:
        s = get(url)
        assert samples(s, names.DEVICES) == [0.0]
        assert samples(s, names.SIDECAR_UP) == [1.0]
        ((info, _),) = s["llmload_gpu_sidecar_info"]
        assert info["backend"] == "nvml"
        assert "NVML Shared Library Not Found" in info["reason"]
        assert names.UP not in s and names.UTILIZATION not in s
    finally:
        rc, err = stop(proc)
    assert rc == 0
    assert "no GPU: NVML cannot start" in err and "--allow-missing" in err


def test_fake_gpus_serve_every_series_and_stop_cleanly_on_sigterm():
    proc, url = start("--fake-gpus", "2", "--interval", "0.2")
    try:
        time.sleep(0.5)  # GPM values from the second sample on
        s = get(url)
        assert samples(s, names.DEVICES) == [2.0]
        assert len(samples(s, names.UTILIZATION)) == 2
        assert len(samples(s, names.SM_ACTIVITY)) == 2
        assert samples(s, "llmload_gpu_samples_total")[0] >= 2
    finally:
        rc, err = stop(proc)
    assert rc == 0, err
    assert "found 2 GPU(s)" in err and "stopped" in err
    port = url.split(":")[2].split("/")[0]
    assert f"listening on 127.0.0.1:{port}, scrape {url}" in err  # the address it really binds


def test_the_log_says_when_every_interface_listens():
    from llmload.gpu.fake import FakeNvml
    from llmload.gpu.sidecar import Sidecar, SidecarConfig

    assert (
        Sidecar(SidecarConfig(host="0.0.0.0", port=9400), FakeNvml(1)).listen_address == "0.0.0.0:9400 (all interfaces)"
    )
    assert Sidecar(SidecarConfig(host="::1", port=9400), FakeNvml(1)).listen_address == "[::1]:9400"


def test_dcgm_names_flag():
    proc, url = start("--fake-gpus", "1", "--dcgm-names", "--hostname", "node-7")
    try:
        s = get(url)
        assert samples(s, "DCGM_FI_DEV_GPU_UTIL", hostname="node-7") == [100.0]
        assert names.UTILIZATION not in s
    finally:
        stop(proc)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "0"], "--interval 0: must be 0.1..3600 seconds"),
        (["--port", "70000"], "--port 70000: must be 0..65535"),
        (["--fake-gpus", "-1"], "--fake-gpus -1"),
    ],
)
def test_bad_flags_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2
    assert message in p.stderr


def test_a_busy_port_is_one_line_and_exit_2():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = run("--fake-gpus", "1", "--host", "127.0.0.1", "--port", str(port))
    assert p.returncode == 2
    errors = [line for line in p.stderr.splitlines() if "error" in line]
    assert errors == [
        f"llmload gpu-sidecar: error: --port {port}: 127.0.0.1:{port} is already in use "
        "(another sidecar? dcgm-exporter uses 9400); choose another port with --port"
    ]


def test_neither_locust_nor_gevent_is_imported_by_the_sidecar():
    port = free_port()
    code = textwrap.dedent(
        f"""
        import json, os, signal, sys, threading, time, urllib.request
        import llmload.gpu
        from llmload.gpu.__main__ import main

        scraped = []

        def scrape_then_stop():
            for _ in range(200):
                try:
                    with urllib.request.urlopen("http://127.0.0.1:{port}/metrics", timeout=1) as r:
                        scraped.append(r.status)
                    break
                except OSError:
                    time.sleep(0.05)
            time.sleep(0.3)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=scrape_then_stop, daemon=True).start()
        served = main(["--fake-gpus", "2", "--host", "127.0.0.1", "--port", "{port}", "--interval", "0.1"])
        no_gpu = main(["--port", "0"])  # the real pynvml, no driver: exit 3
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("locust", "gevent", "greenlet", "zmq", "flask"))
        print(json.dumps({{"served": served, "no_gpu": no_gpu, "scraped": scraped, "heavy": heavy,
                          "pynvml": "pynvml" in sys.modules}}))
        """
    )
    p = run(code=code)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout.splitlines()[-1])
    assert result == {"served": 0, "no_gpu": 3, "scraped": [200], "heavy": [], "pynvml": True}


def test_importing_the_package_does_not_import_pynvml():
    code = "import sys, llmload.gpu; print('pynvml' in sys.modules, 'locust' in sys.modules, 'gevent' in sys.modules)"
    p = run(code=code)
    assert p.stdout.split() == ["False", "False", "False"]
