"""The polling of one run, on a fake transport: outages reported and logged once, comebacks used,
Prometheus as a source, the greenlet's cadence, the stop's last reading, the stored series."""

from __future__ import annotations

import json
import logging
import urllib.parse

import gevent
import pytest

from llmload.collect.poller import Collection, start_collection
from llmload.collect.sources import FetchError
from llmload.config import CollectConfig, read
from tests.helpers.clock import FakeClock
from tests.helpers.collect import text

ENGINE = "http://vllm:8000/metrics"
GPU = "http://gpu:9401/metrics"
DOWN = "http://127.0.0.1:9/metrics"


class FakeTransport:
    """``request(url, timeout, body)``: pages by URL; an exception instance is raised instead."""

    def __init__(self, pages):
        self.pages = dict(pages)
        self.calls = []

    def __call__(self, url, timeout, body=None):
        self.calls.append((url, body))
        page = self.pages.get(url, FetchError("unreachable", "Connection refused"))
        if isinstance(page, Exception):
            raise page
        return page.encode() if isinstance(page, str) else page


def collection(transport, **cfg):
    clock = FakeClock()
    return Collection(CollectConfig(**cfg), clock.t, request=transport, clock=clock), clock


def test_engine_and_gpu_endpoints_polled_and_summarised():
    t = FakeTransport(
        {ENGINE: text("vllm-0.10-v1_llama-3.1-8b_t0.txt"), GPU: text("dcgm-exporter-4.1_h200x2_Hostname-label.txt")}
    )
    c, clock = collection(t, engine_urls=(ENGINE,), gpu_urls=(GPU,))
    c.poll()
    t.pages[ENGINE] = text("vllm-0.10-v1_llama-3.1-8b_t1.txt")
    clock.t += 2
    c.poll()
    extra = c.summary_extra()
    assert set(extra) == {"server", "gpu"}  # no series file configured
    server, gpu = extra["server"], extra["gpu"]
    assert server["engines"] == ["vllm"] and server["polls"] == 2
    assert server["signals"]["preemptions"]["increase"] == 2.0
    assert server["endpoints"][0]["status"] == "ok" and server["endpoints"][0]["engine"] == "vllm"
    assert gpu["endpoints"][0]["gpus"] == 2 and len(gpu["devices"]) == 2
    assert gpu["signals"]["utilization"]["mean"] == pytest.approx(0.96)


def test_one_url_for_both_roles_is_fetched_once_per_poll():
    t = FakeTransport({ENGINE: text("llmload-sim_healthy_8-users.txt")})
    c, _ = collection(t, engine_urls=(ENGINE,), gpu_urls=(ENGINE,))
    c.poll()
    assert len(t.calls) == 1
    extra = c.summary_extra()
    assert extra["server"]["endpoints"][0]["engine"] == "vllm"
    assert extra["gpu"]["endpoints"][0]["gpus"] == 1


def test_unreachable_endpoint_is_reported_logged_once_and_used_again_when_back(caplog):
    t = FakeTransport({ENGINE: text("vllm-0.10-v1_llama-3.1-8b_t0.txt")})
    c, clock = collection(t, engine_urls=(ENGINE, DOWN))
    with caplog.at_level(logging.INFO, logger="llmload"):
        for _ in range(3):
            c.poll()
            clock.t += 2
        t.pages[DOWN] = text("vllm-0.10-v1_llama-3.1-8b_t1.txt")  # it comes up
        c.poll()
    down = [r for r in caplog.records if DOWN in r.getMessage()]
    assert len(down) == 2  # "unreachable" once, "answer again" once
    assert "unreachable" in down[0].getMessage() and "Connection refused" in down[0].getMessage()
    assert down[0].levelno == logging.WARNING and "answer again" in down[1].getMessage()
    ends = {e["url"]: e for e in c.summary_extra()["server"]["endpoints"]}
    assert ends[DOWN]["status"] == "ok" and ends[DOWN]["failures"] == 3 and ends[DOWN]["answers"] == 1
    assert ends[DOWN]["first_seen_s"] == 6.0
    assert c.timeline.gauge("running", DOWN) == [None, None, None, 24.0]
    assert c.timeline.gauge("running") == [0.0, 0.0, 0.0, 24.0]


def test_endpoint_without_known_series_warns_once(caplog):
    t = FakeTransport({ENGINE: "some_other_metric 1\n", GPU: "<html>login</html>"})
    c, _ = collection(t, engine_urls=(ENGINE,), gpu_urls=(GPU,))
    with caplog.at_level(logging.WARNING, logger="llmload"):
        c.poll()
        c.poll()
    extra = c.summary_extra()
    assert extra["server"]["endpoints"][0]["status"] == "no_metrics"
    assert extra["gpu"]["endpoints"][0]["status"] == "bad_answer"
    assert sum("without engine metrics series" in r.getMessage() for r in caplog.records) == 1
    assert extra["server"]["engines"] == [] and extra["server"]["unavailable"] == []


def test_a_source_that_raises_something_unexpected_is_a_bad_answer():
    t = FakeTransport({ENGINE: RuntimeError("boom")})
    c, _ = collection(t, engine_urls=(ENGINE,))
    c.poll()
    (e,) = c.summary_extra()["server"]["endpoints"]
    assert e["status"] == "bad_answer" and "boom" in e["error"]


def test_a_source_that_does_not_answer_in_time_does_not_hold_the_poll():
    def slow(url, timeout, body=None):
        gevent.sleep(30)

    c, _ = collection(slow, engine_urls=(ENGINE,), interval_s=0.1)
    with gevent.Timeout(5):
        c.poll()
    (e,) = c.summary_extra()["server"]["endpoints"]
    assert e["status"] == "unreachable" and "no answer within 0.5s" in e["error"]


def query_answer(rows):
    result = [{"metric": {"__name__": n, **lab}, "value": [0, str(v)]} for n, lab, v in rows]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})


def test_prometheus_source_reads_the_same_signals_with_the_selectors():
    asked = []

    def prometheus(url, timeout, body=None):
        assert url == "http://prom:9090/api/v1/query"
        q = urllib.parse.parse_qs(body.decode())["query"][0]
        asked.append(q)
        if "vllm:num_requests_running" in q:
            return query_answer(
                [
                    ("vllm:num_requests_running", {"instance": "a"}, 3),
                    ("vllm:num_requests_running", {"instance": "b"}, 4),
                    ("vllm:num_preemptions_total", {"instance": "a"}, 10 + len(asked)),
                ]
            ).encode()
        return query_answer([("DCGM_FI_DEV_GPU_UTIL", {"gpu": "0", "UUID": "GPU-a", "Hostname": "n1"}, 80)]).encode()

    c, clock = collection(prometheus, prometheus_url="http://prom:9090", prometheus_selector='job="vllm"')
    c.poll()
    clock.t += 2
    c.poll()
    assert len(asked) == 4
    assert asked[0].startswith('{__name__=~"vllm:num_requests_waiting|') and asked[0].endswith(',job="vllm"}')
    assert asked[1].startswith('{__name__=~"llmload_gpu_utilization_ratio|') and asked[1].endswith('"}')
    extra = c.summary_extra()
    assert extra["server"]["source"] == "prometheus"
    assert extra["server"]["endpoints"][0]["url"] == "http://prom:9090"
    assert extra["server"]["signals"]["running"]["mean"] == 7.0
    assert extra["server"]["signals"]["preemptions"]["increase"] == 2.0
    assert extra["gpu"]["signals"]["utilization"]["mean"] == pytest.approx(0.8)


def test_prometheus_error_answer_is_reported():
    def prometheus(url, timeout, body=None):
        return b'{"status": "error", "errorType": "bad_data", "error": "parse error"}'

    c, _ = collection(prometheus, prometheus_url="http://prom:9090")
    c.poll()
    (e,) = c.summary_extra()["server"]["endpoints"]
    assert e["status"] == "bad_answer" and "parse error" in e["error"]


def test_greenlet_polls_on_an_absolute_schedule_and_stop_takes_a_last_reading():
    t = FakeTransport({ENGINE: text("llmload-sim_healthy_8-users.txt")})
    mono = [50.0]
    polled_at, slept = [], []

    def transport(url, timeout, body=None):
        polled_at.append(round(mono[0], 6))
        if len(polled_at) == 3:
            mono[0] += 0.25  # a slow poll: 2.5 intervals
        return t(url, timeout, body)

    def sleep(seconds):
        slept.append(round(seconds, 6))
        mono[0] += seconds
        gevent.sleep(0)  # yield, as a real sleep does

    c = Collection(CollectConfig(engine_urls=(ENGINE,), interval_s=0.1), 0.0, request=transport,
                   monotonic=lambda: mono[0], sleep=sleep)  # fmt: skip
    c.start()
    while len(polled_at) < 6:
        gevent.sleep(0)
    before = len(polled_at)
    c.stop()
    assert len(polled_at) == before + 1  # the stop's own last reading
    assert polled_at[:6] == [50.0, 50.1, 50.2, 50.45, 50.55, 50.65]  # a slow poll delays the next, never the rest
    assert slept[:5] == [0.1, 0.1, 0.0, 0.1, 0.1]
    polls = len(c.timeline)
    assert polls == len(polled_at) and c.stopped  # the stop's last reading included
    c.stop()  # idempotent
    for _ in range(10):
        gevent.sleep(0)
    assert len(c.timeline) == polls  # nothing polls after the stop
    assert start_collection(CollectConfig(), 0.0) is None


def test_series_written_beside_the_summary_and_referenced(tmp_path):
    t = FakeTransport({ENGINE: text("llmload-sim_healthy_8-users.txt")})
    cfg = CollectConfig.from_values(
        {**read(None), "engine_metrics": [ENGINE], "gpu_metrics": [ENGINE], "summary_json": str(tmp_path / "run" / "summary.json")}
    )
    c = Collection(cfg, 1000.0, request=t, clock=lambda: 1000.5)
    c.poll()
    c.poll()
    c.write_timeseries()
    path = tmp_path / "run" / "summary.timeseries.json"
    series = json.loads(path.read_text())
    assert series["schema"] == "llmload.timeseries/1" and series["t_s"] == [0.5, 0.5]
    assert series["server"]["signals"]["running"] == [8.0, 8.0]
    assert list(series["gpu"]["signals"]) == [
        "utilization",
        "memory_bandwidth_utilization",
        "memory_used_bytes",
        "memory_total_bytes",
        "power_watts",
    ]
    assert c.summary_extra()["timeseries"] == {
        "path": "summary.timeseries.json",
        "schema": "llmload.timeseries/1",
        "polls": 2,
    }


def test_unwritable_series_path_is_logged_not_raised(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    c = Collection(
        CollectConfig(engine_urls=(ENGINE,), timeseries_json=str(blocker / "s.json")), 0.0, request=FakeTransport({})
    )
    with caplog.at_level(logging.ERROR, logger="llmload"):
        c.write_timeseries()
    assert "cannot write the time series" in caplog.text
    assert "timeseries" not in c.summary_extra()


def test_the_baseline_is_read_before_start_returns():
    """test_start calls start() before Locust spawns a user: the baseline must not wait for the greenlet.

    Read on the greenlet, it came after the first requests had started (llama.cpp: the run's
    ``prompt_tokens_total`` increase was 64 tokens short of what the answers' usage stated).
    """
    t = FakeTransport({ENGINE: text("llmload-sim_healthy_8-users.txt")})
    c = Collection(CollectConfig(engine_urls=(ENGINE,), interval_s=0.1), 0.0, request=t)
    c.start()
    assert len(c.timeline) == 1 and len(t.calls) == 1  # no other greenlet has run yet
    c.stop(final=False)
