"""The collection flags: URL lists, defaults, validation, where the series go."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from llmload.config import CollectConfig, public_url, read
from llmload.errors import ConfigError


def cfg(summary_json="", **opts):
    return CollectConfig.from_values(read(SimpleNamespace(summary_json=summary_json, **opts)))


def test_nothing_given_means_nothing_polled():
    c = cfg()
    assert not c.enabled and c.interval_s == 2.0 and c.timeseries_json == ""
    assert CollectConfig.from_values(read(None)).engine_urls == ()


def test_repeated_and_comma_separated_urls_with_metrics_path_added():
    c = cfg(
        engine_metrics=["http://a:8000", "http://b:8000/metrics,http://c:8000/custom", "http://a:8000/metrics"],
        gpu_metrics="http://gpu:9401/",
    )
    assert c.engine_urls == ("http://a:8000/metrics", "http://b:8000/metrics", "http://c:8000/custom")
    assert c.gpu_urls == ("http://gpu:9401/metrics",)
    assert c.enabled


@pytest.mark.parametrize("bad", ["vllm:8000", "ftp://x/metrics", "http://"])
def test_a_url_that_is_not_http_is_an_error(bad):
    with pytest.raises(ConfigError, match="--engine-metrics"):
        cfg(engine_metrics=[bad])


def test_interval_and_timeout():
    assert cfg(collect_interval="500ms").interval_s == 0.5
    assert cfg(collect_interval="10s").timeout_s == 5.0
    assert cfg(collect_interval="0.2").timeout_s == 0.5
    assert cfg(collect_interval="0").interval_s == 2.0  # 0 = default
    with pytest.raises(ConfigError, match="--collect-interval"):
        cfg(collect_interval="50ms")


def test_prometheus_url_and_selectors():
    c = cfg(
        prometheus_url="http://prom:9090/",
        prometheus_selector='{job="vllm"}',
        prometheus_gpu_selector='Hostname=~"gpu-.*"',
    )
    assert c.prometheus_url == "http://prom:9090" and c.enabled
    assert c.prometheus_selector == 'job="vllm"'
    assert c.prometheus_gpu_selector == 'Hostname=~"gpu-.*"'
    with pytest.raises(ConfigError, match="--prometheus-selector"):
        cfg(prometheus_selector="job=vllm")
    with pytest.raises(ConfigError, match="one Prometheus"):
        cfg(prometheus_url="http://a:9090,http://b:9090")


def test_series_go_beside_the_summary_unless_told_otherwise(tmp_path):
    summary = str(tmp_path / "runs" / "summary.json")
    c = cfg(summary, engine_metrics=["http://a:8000"])
    assert c.timeseries_json == str(tmp_path / "runs" / "summary.timeseries.json")
    assert c.timeseries_ref == "summary.timeseries.json"
    explicit = str(tmp_path / "series" / "s.json")
    c = cfg(summary, engine_metrics=["http://a:8000"], timeseries_json=explicit)
    assert c.timeseries_json == explicit and c.timeseries_ref == os.path.join("..", "series", "s.json")
    assert cfg("", timeseries_json="x.json").timeseries_ref == "x.json"


def test_credentials_never_reach_the_summary():
    c = cfg(engine_metrics=["http://user:secret@vllm:8000/metrics"])
    assert "secret" not in str(c.public_dict())
    assert public_url("https://u:p@h:1/m?x=1") == "https://h:1/m?x=1"
    assert public_url("http://h/m") == "http://h/m"
