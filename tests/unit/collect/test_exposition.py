"""Parsing /metrics texts and Prometheus answers into the name-indexed samples the readers use."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from llmload.collect.engines import ENGINE_NAMES
from llmload.collect.exposition import Samples, parse_exposition, samples_from_query
from tests.helpers.collect import FIXTURES, samples, text

PAGES = sorted(p.name for p in FIXTURES.glob("*.txt"))


def reference(text: str) -> Samples:
    """The page read by prometheus_client's parser."""
    return Samples((s.name, s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples)


def rows(s: Samples) -> list:
    return sorted((n, sorted(lab.items()), v) for n in s.names() for lab, v in s.get(n))


@pytest.mark.parametrize("page", PAGES)
def test_the_fast_parser_reads_every_recorded_page_as_prometheus_client_does(page):
    assert rows(parse_exposition(text(page))) == rows(reference(text(page)))


def test_label_values_with_escapes_braces_and_commas():
    t = r'm{a="x\"y",b="{1,2}",c="line\nnext",d="back\\slash"} 1.5 1712345678000' + "\n"
    assert rows(parse_exposition(t)) == rows(reference(t))
    ((labels, value),) = parse_exposition(t).get("m")
    assert labels == {"a": 'x"y', "b": "{1,2}", "c": "line\nnext", "d": "back\\slash"} and value == 1.5


def test_every_recorded_page_keeps_only_the_names_read():
    for page in PAGES:
        s = samples(page)
        assert len(s) > 0, page
        assert not any(n.startswith(("python_", "process_", "http_")) or n.endswith("_created") for n in s.names()), (
            page
        )


def test_counter_names_are_found_without_total_however_they_were_written():
    vllm = samples("vllm-0.10-v1_llama-3.1-8b_t1.txt")  # prometheus_client: vllm:num_preemptions_total
    tgi = samples("tgi-3.3_llama-3.1-8b.txt")  # metrics-exporter-prometheus: tgi_request_success, no _total
    llama = parse_exposition(text("llamacpp-b6500_server--metrics.txt"))  # TYPE line already says ..._total
    assert vllm.get("vllm:num_preemptions") == [
        ({"engine": "0", "model_name": "meta-llama/Llama-3.1-8B-Instruct"}, 2.0)
    ]
    assert tgi.get("tgi_request_success") == [({}, 246.0)]
    assert llama.get("llamacpp:prompt_tokens") == [({}, 33065.0)]
    assert llama.get("llamacpp:n_busy_slots_per_decode") == [({}, 3.16342)]  # a float under TYPE counter


def test_histogram_series_and_created_series_are_kept_apart():
    s = samples("vllm-0.10-v1_llama-3.1-8b_t0.txt")
    assert len(s.get("vllm:time_to_first_token_seconds_bucket")) == 23  # 22 bounds + +Inf
    assert s.get("vllm:time_to_first_token_seconds_count")[0][1] == 120.0
    assert not s.get("vllm:num_preemptions_created")  # filtered out
    assert parse_exposition(text("vllm-0.10-v1_llama-3.1-8b_t0.txt")).get("vllm:num_preemptions_created")


def test_without_prefixes_everything_is_kept():
    s = parse_exposition(text("vllm-0.10-v1_llama-3.1-8b_t0.txt"))
    assert s.get("python_gc_collections")
    assert s.get("http_requests")


def test_nan_and_infinite_values_are_left_out():
    s = parse_exposition('a NaN\nb +Inf\nc{x="1"} 2\n')
    assert list(s.names()) == ["c"]


def test_a_malformed_line_loses_only_itself():
    t = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\nvllm:num_requests_running{ 1\nvllm:num_requests_waiting x\nvllm:num_requests_waiting 2\n"
    s = parse_exposition(t, ENGINE_NAMES)
    assert s.get("vllm:num_requests_running") == [({}, 3.0)]
    assert s.get("vllm:num_requests_waiting") == [({}, 2.0)]


def test_a_prometheus_query_answer_becomes_samples_with_its_labels():
    answer = {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [
                {"metric": {"__name__": "vllm:num_requests_running", "instance": "a:8000"}, "value": [1.7e9, "4"]},
                {"metric": {"__name__": "vllm:num_requests_running", "instance": "b:8000"}, "value": [1.7e9, "6"]},
                {"metric": {"__name__": "tgi_request_count", "job": "tgi"}, "value": [1.7e9, "12"]},
                {"metric": {"__name__": "vllm:kv_cache_usage_perc"}, "value": [1.7e9, "NaN"]},
                {"metric": {"__name__": "broken"}, "value": [1.7e9]},
            ],
        },
    }
    s = samples_from_query(answer)
    assert sorted(v for _, v in s.get("vllm:num_requests_running")) == [4.0, 6.0]
    assert s.get("vllm:num_requests_running")[0][0] == {"instance": "a:8000"}
    assert s.get("tgi_request_count") == [({"job": "tgi"}, 12.0)]
    assert not s.get("vllm:kv_cache_usage_perc") and not s.get("broken")


def test_merge_keeps_the_rows_of_every_part():
    a = Samples([("x", {"i": "1"}, 1.0)])
    b = Samples([("x", {"i": "2"}, 2.0), ("y_total", {}, 3.0)])
    m = Samples.merge([a, b])
    assert [v for _, v in m.get("x")] == [1.0, 2.0]
    assert m.get("y") == [({}, 3.0)]
    assert m.first(["nope", "y", "x"]) == ("y", [({}, 3.0)])
    assert m.count_prefix("x") == 1 and bool(Samples()) is False
