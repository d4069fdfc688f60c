"""Each simulator preset, driven by llmload itself, shows the symptom it is named for.

Every test starts ``python -m llmload.sim --preset ...`` (step costs scaled down with
``--time-scale``, small KV pools where the symptom needs a full one), runs a real Locust
LocalRunner with llmload's user for a few seconds with a small profile, and scrapes the
simulator's ``/metrics`` every 100 ms meanwhile. Assertions compare figures within one
test (ratios between two runs of the same server) rather than absolute times, so that a
busy machine slows both sides alike.
"""

from __future__ import annotations

import re
import statistics
import urllib.request
from contextlib import contextmanager

import gevent
import locust  # noqa: F401  # monkey-patches like a Locust run: the scraper's urllib yields to the users
import pytest

from tests.helpers.harness import run_inprocess

pytestmark = pytest.mark.integration

_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)$")
WATCHED = (
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:kv_cache_usage_perc",
    "vllm:num_preemptions_total",
    "llmload_sim_kv_allocation_failures_total",
    "llmload_gpu_utilization_ratio",
    "llmload_gpu_memory_bandwidth_utilization_ratio",
)


def scrape(url: str) -> dict[str, float]:
    """The watched series of the simulator's /metrics (one value each)."""
    with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m and m.group(1) in WATCHED:
            out[m.group(1)] = float(m.group(2))
    return out


@contextmanager
def scraping(url: str, every: float = 0.1):
    """Scrape ``url`` every ``every`` s while the block runs; yields the list of samples."""
    samples: list[dict[str, float]] = []
    running = True

    def loop() -> None:
        while running:
            samples.append(scrape(url))
            gevent.sleep(every)

    g = gevent.spawn(loop)
    try:
        yield samples
    finally:
        running = False
        g.join(5)


@pytest.fixture
def profile(tmp_path):
    """Factory: ``profile(("short", 20, 40, 1), ...)`` (name, input, output, weight) -> path."""

    def write(*classes: tuple[str, int, int, int]) -> str:
        text = 'name = "t"\n' + "".join(
            f'[[classes]]\nname = "{n}"\nweight = {w}\ninput_tokens = {i}\noutput_tokens = {o}\n'
            for n, i, o, w in classes
        )
        path = tmp_path / f"p{len(list(tmp_path.iterdir()))}.toml"
        path.write_text(text)
        return str(path)

    return write


def load(url: str, profile_path: str, users: int, seconds: float) -> tuple[dict, list[dict[str, float]]]:
    """One llmload run against ``url``; returns (summary, /metrics samples taken meanwhile)."""
    with scraping(url) as samples:
        s = run_inprocess(url, ["--profile", profile_path], users=users, seconds=seconds)
    samples.append(scrape(url))
    o = s["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]
    assert o["ok"] > 0, s["errors_by_kind"]
    return s, samples


def peak(samples: list[dict[str, float]], name: str) -> float:
    return max(x[name] for x in samples)


def test_healthy_serves_without_queueing_preempting_or_failing(sim, profile):
    url = sim("--preset", "healthy", "--time-scale", "0.25")
    s, samples = load(url, profile(("chat", 200, 30, 1)), users=4, seconds=3)
    o = s["overall"]
    assert o["errors"] == 0, s["errors_by_kind"]
    assert samples[-1]["vllm:num_preemptions_total"] == 0
    assert peak(samples, "vllm:kv_cache_usage_perc") < 0.1
    decode_step_ms = (3 + 32 + 4 * 0.1) * 0.25  # host + weights + 4 sequences (KV reads ~0.1 ms more)
    assert decode_step_ms * 0.8 < o["itl_ms"]["p50"] < decode_step_ms * 1.5
    assert peak(samples, "llmload_gpu_utilization_ratio") > 0.8


def test_batch_starved_ttft_grows_with_concurrency_while_tpot_stays_flat(sim, profile):
    url = sim("--preset", "batch-starved", "--time-scale", "0.25")
    path = profile(("chat", 100, 30, 1))
    low, low_samples = load(url, path, users=2, seconds=3)
    high, high_samples = load(url, path, users=12, seconds=3)
    lo, hi = low["overall"], high["overall"]
    assert hi["ttft_ms"]["p50"] > 4 * lo["ttft_ms"]["p50"]  # requests queue for one of the 4 slots
    assert 0.75 < hi["tpot_ms"]["mean"] / lo["tpot_ms"]["mean"] < 1.35  # the batch never grows past 4
    assert peak(high_samples, "vllm:num_requests_waiting") >= 4
    assert peak(high_samples, "vllm:num_requests_running") == 4
    busy = [x["llmload_gpu_utilization_ratio"] for x in high_samples[5:-2]]
    assert 0.4 < statistics.median(busy) < 0.7  # the GPU idles while the host prepares each step


def test_bandwidth_bound_tpot_rises_with_the_batch(sim, profile):
    # Prefill made fast (--prefill-tps) so that both runs measure decode steps.
    url = sim("--preset", "bandwidth-bound", "--time-scale", "0.5", "--prefill-tps", "40000")
    path = profile(("rag", 1200, 60, 1))
    one, _ = load(url, path, users=1, seconds=3)
    many, samples = load(url, path, users=16, seconds=4)
    assert many["overall"]["itl_ms"]["p50"] > 1.8 * one["overall"]["itl_ms"]["p50"]
    assert many["overall"]["tpot_ms"]["mean"] > 1.5 * one["overall"]["tpot_ms"]["mean"]
    # Bandwidth-bound: the step time grows with the bytes read, so the bandwidth stays well used.
    assert peak(samples, "llmload_gpu_memory_bandwidth_utilization_ratio") > 0.45
    assert samples[-1]["vllm:num_preemptions_total"] == 0  # slower because of bytes, not of memory


def test_kv_pressure_preempts_with_the_cache_full(sim, profile):
    url = sim("--preset", "kv-pressure", "--time-scale", "0.2", "--kv-blocks", "40")
    s, samples = load(url, profile(("chat", 60, 80, 1)), users=10, seconds=3)
    assert s["overall"]["errors"] == 0, s["errors_by_kind"]  # preemption is invisible but for latency
    assert samples[-1]["vllm:num_preemptions_total"] > 0
    assert peak(samples, "vllm:kv_cache_usage_perc") > 0.9
    assert peak(samples, "vllm:num_requests_waiting") > 0


def test_kv_fragmented_fails_requests_with_free_blocks_left(sim, profile):
    url = sim("--preset", "kv-fragmented", "--time-scale", "0.2", "--kv-blocks", "96")
    path = profile(("a", 30, 150, 1), ("b", 300, 30, 1), ("c", 100, 80, 1))
    s, samples = load(url, path, users=8, seconds=3)
    kinds = s["errors_by_kind"]
    assert s["overall"]["errors"] > 0
    assert set(kinds) <= {"http_500", "server_error"}, kinds
    assert samples[-1]["llmload_sim_kv_allocation_failures_total"] >= s["overall"]["errors"]
    busy = [x["vllm:kv_cache_usage_perc"] for x in samples if x["vllm:num_requests_running"] > 0]
    assert statistics.median(busy) < 0.9  # failing while a good part of the cache is free


def test_prefill_interference_and_chunked_prefill_removes_most_of_it(sim, profile):
    off = sim("--preset", "prefill-interference", "--time-scale", "0.2")
    on = sim("--preset", "prefill-interference", "--time-scale", "0.2", "--chunked-prefill")
    short_only = profile(("short", 20, 40, 1))
    mixed = profile(("short", 20, 40, 1), ("long", 2000, 40, 1))
    base, _ = load(off, short_only, users=8, seconds=3)
    stalled, _ = load(off, mixed, users=8, seconds=4)
    chunked, _ = load(on, mixed, users=8, seconds=4)
    p99 = lambda s: s["classes"]["short"]["itl_ms"]["p99"]  # noqa: E731
    assert p99(stalled) > 3 * p99(base)  # long prompts stall every running decode
    assert p99(chunked) < 0.5 * p99(stalled)  # chunks share steps with the decodes
