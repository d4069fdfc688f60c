"""Serving /metrics: the dedicated listener, the web UI route, flags, and the listener's lifetime."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest
from locust import events as global_events
from locust.argument_parser import get_parser
from locust.env import Environment

from llmload.config import ExporterConfig, add_arguments, read
from llmload.errors import ConfigError
from llmload.exporter import start_exporter
from llmload.exporter.collector import ExportContext, LlmloadCollector, new_registry
from llmload.exporter.server import Exporter, MetricsServer
from llmload.metrics.aggregation import Aggregator
from llmload.plugin import install
from llmload.users import LLMUser
from tests.helpers.ports import free_port


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.read().decode()


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def registry():
    ctx = ExportContext("openai-chat", "m", "default", ("short",))
    return new_registry(LlmloadCollector(Aggregator().snapshot, lambda: ctx))


def parse(args: list[str]):
    parser = get_parser()
    if not any(a.dest == "api" for a in parser._actions):
        add_arguments(parser)
    return parser.parse_args(["--host", "http://127.0.0.1:9", "--model", "m", "--no-preflight", "--web-port", "0", *args])


def test_listener_serves_the_registry_and_stops():
    server = MetricsServer(registry(), "127.0.0.1", free_port())
    server.start()
    try:
        text = get(server.url)
        assert 'llmload_requests_total{api="openai-chat",class="short",model="m",outcome="ok"} 0.0' in text
        assert "llmload_ttft_seconds_bucket" in text
    finally:
        server.stop()
    assert refused(server.port)


def test_by_default_the_listener_is_on_loopback_only(monkeypatch):
    """It listened on every interface (0.0.0.0:9646, no auth) unless told otherwise; now --exporter-host opens it."""
    monkeypatch.delenv("LLMLOAD_EXPORTER_HOST", raising=False)
    for args, bound in (([], "127.0.0.1"), (["--exporter-host", "0.0.0.0"], "0.0.0.0")):
        config = ExporterConfig.from_values(read(parse(["--exporter-port", str(free_port()), *args])))
        server = MetricsServer(registry(), config.host, config.port)
        server.start()
        try:
            assert server._server.socket.getsockname()[0] == bound
        finally:
            server.stop()


def test_a_busy_port_is_one_config_error_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        with pytest.raises(ConfigError) as e:
            MetricsServer(registry(), "127.0.0.1", port).start()
    message = str(e.value)
    assert "\n" not in message
    assert f"--exporter-port {port}: 127.0.0.1:{port} is already in use" in message
    assert "--no-exporter" in message


def test_linger_keeps_serving_then_closes():
    server = MetricsServer(registry(), "127.0.0.1", free_port())
    server.start()
    lingered = []

    def sleep(seconds: float) -> None:  # while it lingers, /metrics still answers
        lingered.append((seconds, "llmload_ttft_seconds_bucket" in get(server.url)))

    exporter = Exporter(registry(), server, linger_s=0.3, sleep=sleep)
    exporter.hold(None)
    exporter.close()
    assert lingered == [(0.3, True)]
    assert refused(server.port)


def test_no_exporter_flag_starts_nothing():
    ctx = ExportContext("openai-chat", "m", "default")
    assert start_exporter(ExporterConfig(enabled=False), Aggregator().snapshot, lambda: ctx) is None


@pytest.fixture
def locust_env(monkeypatch):
    """A real Environment, LocalRunner and WebUI, as locust.main builds them before ``init``."""
    monkeypatch.setattr("sys.argv", ["locust"])  # the web UI reads extra options from argv
    made = []

    def make(args: list[str], web_ui: bool = True, web_base_path: str | None = None):
        class U(LLMUser):
            pass

        opts = parse(args)
        env = Environment(user_classes=[U], host=opts.host, parsed_options=opts, events=type(global_events)())
        env.create_local_runner()
        if web_ui:
            env.create_web_ui("127.0.0.1", 0, web_base_path=web_base_path)
        made.append(env)
        return env

    yield make
    for env in made:
        if getattr(env, "llmload", None) is not None:
            env.llmload.on_quitting()
        if env.web_ui is not None and env.web_ui.greenlet is not None:
            env.web_ui.greenlet.kill(block=False)
        env.runner.quit()


def test_installed_on_the_listener_and_the_web_ui_until_the_runner_quits(locust_env):
    port = free_port()
    env = locust_env(["--exporter-port", str(port), "--exporter-host", "127.0.0.1"])
    install(env)
    text = get(f"http://127.0.0.1:{port}/metrics")
    assert 'llmload_info{api="m"' not in text and "llmload_info{" in text
    assert 'class="short"' in text and 'class="medium"' in text and 'class="long"' in text  # the default profile
    web = env.web_ui.app.test_client().get("/metrics")
    assert web.status_code == 200 and web.content_type.startswith("text/plain")
    assert {ln.split(" ")[0] for ln in web.get_data(as_text=True).splitlines() if "_bucket" in ln} == {
        ln.split(" ")[0] for ln in text.splitlines() if "_bucket" in ln
    }
    om = env.web_ui.app.test_client().get("/metrics", headers={"Accept": "application/openmetrics-text"})
    assert om.content_type.startswith("application/openmetrics-text")
    env.runner.quit()
    assert refused(port)


def test_web_ui_route_follows_the_web_base_path(locust_env):
    env = locust_env(["--exporter-port", "0"], web_base_path="/locust")
    install(env)
    client = env.web_ui.app.test_client()
    assert b"llmload_ttft_seconds_bucket" in client.get("/locust/metrics").data


def test_no_exporter_means_no_listener_and_no_route(locust_env):
    env = locust_env(["--no-exporter"])
    install(env)
    assert env.web_ui.app.test_client().get("/metrics").status_code == 404


def test_busy_port_exits_2_before_load(locust_env, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        env = locust_env(["--exporter-port", str(port), "--exporter-host", "127.0.0.1"], web_ui=False)
        with pytest.raises(SystemExit) as e:
            install(env)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"llmload: error: --exporter-port {port}:")
