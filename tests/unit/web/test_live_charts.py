"""The chart routes and the sampling, on a real Locust ``Environment`` + ``WebUI`` read with Flask's test client."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from llmload.metrics.aggregation import WorkerGauges
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.plugin import install
from llmload.runtime import Runtime
from llmload.web.live_charts import LOADER, STATIC_DIR, ChartSampler
from llmload.web.series import SCHEMA, SeriesBuffer
from tests.helpers.clock import FakeClock
from tests.helpers.web_env import local_web_env

MS = 1_000_000


def finished(cls, ttft_ms=50, outcome="ok"):
    r = RequestRecord(cls, input_tokens=10, max_tokens=5)
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + (ttft_ms + i * 5) * MS for i in range(5)]
    r.end_ns = r.chunk_ns[-1] + MS
    settle_token_counts(r, None, None)
    r.outcome, r.error_kind = outcome, "http_500" if outcome == "error" else None
    return r


@pytest.fixture
def web(monkeypatch):
    """``web(web_base_path=None)`` → (env, runtime, sampler, clock): the sampler ticks by hand."""
    monkeypatch.setattr("sys.argv", ["locust"])  # Locust's web UI parses sys.argv for the form's extra options
    made = []

    def make(web_base_path=None):
        env = local_web_env(web_base_path=web_base_path)
        clock = FakeClock()
        runtime = install(env, Runtime(env, clock=clock))
        sampler: ChartSampler = env.web_ui._llmload_charts
        sampler.greenlet.kill()  # the test ticks
        sampler.buffer = SeriesBuffer(clock=clock)
        made.append((env, runtime))
        return env, runtime, sampler, clock

    yield make
    for env, runtime in made:
        runtime.on_quitting()
        env.web_ui.greenlet.kill(block=False)
        env.runner.quit()


def feed(runtime, records, **gauges):
    for r in records:
        runtime.load.on_record(r)
    runtime.coordinator.merge("local", {"m": runtime.load.recorder.drain(), "g": WorkerGauges(**gauges).to_wire()})


def test_samples_only_while_a_test_runs_and_a_new_test_starts_a_new_series(web):
    env, runtime, sampler, clock = web()
    assert sampler.tick() is False and len(sampler.buffer) == 0  # ready: no test yet
    env.events.test_start.fire(environment=env)
    env.runner.state = "running"
    g = sampler.buffer.generation
    for _ in range(3):
        clock.t += 2.0
        feed(runtime, [finished("short")], users=1, in_flight=1, in_flight_by_class={"short": 1})
        assert sampler.tick() is True
    assert len(sampler.buffer) == 3 and sampler.buffer.generation == g + 1
    env.runner.state = "cleanup"  # the last requests finish (stop timeout)
    assert sampler.tick() is True and sampler.buffer.generation == g + 1
    env.runner.state = "stopped"
    clock.t += 2.0
    assert sampler.tick() is True  # one more, just after the stop (the last reports)
    assert sampler.tick() is False and len(sampler.buffer) == 5
    env.runner.state = "spawning"  # the next test
    assert sampler.tick() is True and len(sampler.buffer) == 1 and sampler.buffer.generation == g + 2


def test_a_failing_sample_is_logged_once_and_the_loop_goes_on(web, caplog):
    env, runtime, sampler, _ = web()
    env.runner.state = "running"
    calls = []

    def broken():
        calls.append(1)
        raise RuntimeError("boom")

    sampler.inputs = replace(sampler.inputs, snapshot=broken)
    ticks = iter([True, True, True, False])
    sampler.run(lambda: next(ticks), interval_s=0)
    assert len(calls) == 3
    assert [r.message for r in caplog.records].count("llmload: could not sample the live charts") == 1


def test_series_route_serves_columns_incrementally_and_rejects_bad_parameters(web):
    env, runtime, sampler, clock = web()
    client = env.web_ui.app.test_client()
    env.events.test_start.fire(environment=env)
    env.runner.state = "running"
    for ttft, n in ((50, 4), (400, 8)):
        clock.t += 2.0
        feed(runtime, [finished("short", ttft)] * n + [finished("long", ttft, "error")], in_flight=2)
        sampler.tick()
    r = client.get("/llmload/series?class=short")
    assert r.status_code == 200 and r.mimetype == "application/json"
    d = r.get_json()
    assert d["schema"] == SCHEMA and d["state"] == "running" and d["class"] == "short"
    assert d["classes"] == ["short", "medium", "long", "Overall"]  # profile order, Overall last
    assert d["t"] == [1002.0, 1004.0]
    p50 = d["columns"]["ttft_p50_ms"]
    assert p50[0] == pytest.approx(50, rel=0.01) and p50[1] == pytest.approx(400, rel=0.01)  # most now slow
    assert d["columns"]["errors_per_s"] == [0.0, 0.0] and d["steps"] == [] and d["baseline"] is None
    assert d["limit_factor"] == pytest.approx(1.5)  # 1 + --degradation 0.5
    overall = client.get("/llmload/series").get_json()
    assert overall["class"] == "Overall" and overall["columns"]["in_flight"] == [2, 2]
    assert overall["columns"]["error_rate"] == [pytest.approx(1 / 5), pytest.approx(2 / 14, abs=1e-4)]
    newer = client.get(f"/llmload/series?since=1002&generation={d['generation']}").get_json()
    assert newer["full"] is False and newer["t"] == [1004.0]
    bad = client.get("/llmload/series?class=nope")
    assert bad.status_code == 400 and "unknown request class" in bad.get_json()["error"]
    assert "short, medium, long, Overall" in bad.get_json()["error"]
    bad = client.get("/llmload/series?since=soon")
    assert bad.status_code == 400 and bad.get_json()["error"] == "since='soon': must be a number"


def test_the_series_carry_the_ladders_steps_and_baseline(web):
    env, runtime, sampler, _ = web()
    env.events.test_start.fire(environment=env)
    runtime.steps.enter(0, 1, steady=True)
    runtime.coordinator.merge(
        "local", {"m": {}, "s": {"0": _wire([finished("short", 100)] * 5)}, "g": WorkerGauges().to_wire()}
    )
    d = env.web_ui.app.test_client().get("/llmload/series").get_json()
    assert [(s["index"], s["users"]) for s in d["steps"]] == [(0, 1)] and d["steps"][0]["steady_from"] is not None
    assert d["baseline"]["ttft_p50_ms"] == pytest.approx(100, rel=0.01)
    assert d["baseline"]["tpot_p50_ms"] == pytest.approx(5, rel=0.01)


def _wire(records):
    from llmload.metrics.recorder import MetricSet

    m = MetricSet()
    for r in records:
        m.add(r)
    return m.to_wire()


def test_the_page_gets_the_loader_once_and_the_chart_page_and_assets_are_served(web):
    env, _, _, _ = web()
    client = env.web_ui.app.test_client()
    for _ in range(2):  # Locust re-renders the page on every GET
        html = client.get("/").get_data(as_text=True)
        assert html.count(LOADER) == 1 and html.index(LOADER) < html.index("</body>")
    page = client.get("/llmload/charts")
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert 'src="static/uPlot.iife.min.js"' in text and 'src="static/charts.js"' in text
    for name in re.findall(r'(?:src|href)="static/([^"]+)"', text) + ["loader.js", "LICENSE.uPlot"]:
        r = client.get(f"/llmload/static/{name}")
        assert r.status_code == 200 and r.get_data() == (STATIC_DIR / name).read_bytes(), name
    banner = client.get("/llmload/static/uPlot.iife.min.js").get_data()[:60]
    assert banner.startswith(b"/*! https://github.com/leeoniya/uPlot (v1.6.32)")  # as llmload/web/static/README.md says
    assert client.get("/llmload/static/../charts.py").status_code == 404
    links = env.web_ui.template_args["extended_csv_files"]
    assert {"href": "./llmload/charts", "title": "Open the LLM charts in a page of their own"} in links


def test_web_base_path_is_honoured(web):
    env, _, _, _ = web(web_base_path="/base")
    client = env.web_ui.app.test_client()
    assert client.get("/base/llmload/series").status_code == 200
    assert client.get("/base/llmload/charts").status_code == 200
    assert client.get("/base/llmload/static/loader.js").status_code == 200
    assert client.get("/llmload/series").status_code == 404
    assert LOADER in client.get("/base/").get_data(as_text=True)  # relative: resolves below /base/
