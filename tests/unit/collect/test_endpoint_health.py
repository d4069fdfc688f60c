"""Endpoint health as the summary reports it, and when a change is worth a log line."""

from __future__ import annotations

from llmload.collect.endpoint_health import EndpointStatus


def test_never_reachable_endpoint():
    s = EndpointStatus("http://127.0.0.1:9/metrics")
    assert s.failed(100.5, "unreachable", "Connection refused") is True
    assert s.failed(102.5, "unreachable", "Connection refused") is False  # already down: no new log line
    d = s.to_dict("engine", t0=100.0)
    assert d["status"] == "unreachable"
    assert d["error"] == "Connection refused"
    assert (d["polls"], d["answers"], d["failures"], d["outages"]) == (2, 0, 2, 0)
    assert d["first_seen"] is None and d["error_at_s"] == 0.5
    assert d["engine"] is None


def test_endpoint_that_goes_away_and_comes_back():
    s = EndpointStatus("http://gpu:9401/metrics")
    assert s.answered(10.0) is False
    s.gpus = 8
    assert s.failed(12.0, "http_error", "HTTP 503 Service Unavailable") is True
    assert s.to_dict("gpu", 10.0)["status"] == "http_error"
    assert s.answered(14.0) is True  # back: one log line
    d = s.to_dict("gpu", t0=10.0)
    assert d["status"] == "ok" and d["gpus"] == 8
    assert (d["answers"], d["failures"], d["outages"]) == (2, 1, 1)
    assert (d["first_seen_s"], d["last_seen_s"]) == (0.0, 4.0)
    assert d["error"] == "HTTP 503 Service Unavailable"  # the last error stays visible


def test_answering_without_series_of_the_role():
    s = EndpointStatus("http://vllm:8000/metrics")
    s.answered(1.0)
    d = s.to_dict("engine", 0.0)
    assert d["status"] == "no_metrics" and "vllm:" in d["error"]
    s.engine = "vllm"
    assert s.to_dict("engine", 0.0)["status"] == "ok"
    assert s.to_dict("gpu", 0.0)["status"] == "no_metrics"
