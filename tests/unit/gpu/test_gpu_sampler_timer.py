"""The sampler runs on its own timer; scrapes read the last sample and cost no backend call; start-up."""

from __future__ import annotations

import time
import urllib.request
from collections import Counter

import pytest
from gpu_helpers import fake_rig, parse, samples
from prometheus_client import generate_latest

from llmload.gpu import FakeNvml, GpuUnavailable, NvmlCallError, Sampler, Sidecar, SidecarConfig, names, probe


def wait_for(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_samples_advance_on_the_timer_without_any_scrape():
    fake = FakeNvml(2)
    fake.open()
    sampler = Sampler(fake, probe(fake, "h"), interval_s=0.05)
    sampler.start()
    try:
        assert wait_for(lambda: sampler.snapshot.samples >= 5)
        assert fake.calls["power_w"] >= 2 + 2 * 5  # probe + every sample, both GPUs
    finally:
        sampler.stop()
    n = sampler.snapshot.samples
    time.sleep(0.2)
    assert sampler.snapshot.samples == n  # stopped


def test_the_timer_keeps_a_fixed_rate():
    fake = FakeNvml(1)
    fake.open()
    sampler = Sampler(fake, probe(fake, "h"), interval_s=0.1)
    t0 = time.monotonic()
    sampler.start()
    time.sleep(1.0)
    sampler.stop()
    elapsed = time.monotonic() - t0
    assert 0.5 * elapsed / 0.1 <= sampler.snapshot.samples <= elapsed / 0.1 + 1


def test_a_scrape_makes_no_backend_call():
    r = fake_rig(4)
    before = Counter(r.backend.calls)
    for _ in range(20):
        generate_latest(r.registry)
    assert r.backend.calls == before


def test_scrapes_over_http_read_the_last_sample_and_do_not_trigger_one():
    fake = FakeNvml(2)
    sidecar = Sidecar(SidecarConfig(host="127.0.0.1", port=0, interval_s=3600), backend=fake)
    sidecar.start()
    try:
        before = Counter(fake.calls)
        for _ in range(10):
            with urllib.request.urlopen(sidecar.url, timeout=5) as resp:
                s = parse(resp.read().decode())
        assert fake.calls == before
        assert samples(s, "llmload_gpu_samples_total") == [1.0]  # the one taken at start
        assert samples(s, names.POWER, gpu="0") == [627.4]
    finally:
        sidecar.stop()


class _BuggyFake(FakeNvml):
    """A backend whose power reading has a bug (not an NVML error) twice."""

    def __init__(self) -> None:
        super().__init__(1)
        self.bugs = 0  # armed after the probe

    def power_w(self, index: int) -> float:
        if self.bugs:
            self.bugs -= 1
            raise RuntimeError("a bug")
        return super().power_w(index)


def test_an_unexpected_error_in_a_sample_is_logged_and_the_timer_goes_on(caplog):
    fake = _BuggyFake()
    fake.open()
    sampler = Sampler(fake, probe(fake, "h"), interval_s=0.05)
    fake.bugs = 2
    sampler.start()
    try:
        assert wait_for(lambda: sampler.snapshot.samples >= 3)
    finally:
        sampler.stop()
    assert fake.bugs == 0
    assert any("GPU sample failed" in r.getMessage() for r in caplog.records)


class _CountFails(FakeNvml):
    def device_count(self) -> int:
        raise NvmlCallError("nvml: Timeout")


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        (FakeNvml([]), "NVML works but found no GPU"),
        (_CountFails(1), "NVML error at start: nvml: Timeout"),
        (FakeNvml(1, unavailable="no driver here"), "no driver here"),
    ],
)
def test_no_usable_gpu_at_start_is_gpu_unavailable_or_with_allow_missing_a_running_exporter(backend, message):
    with pytest.raises(GpuUnavailable, match=message):
        Sidecar(SidecarConfig(host="127.0.0.1", port=0), backend=backend).start()
    sidecar = Sidecar(SidecarConfig(host="127.0.0.1", port=0, allow_missing=True), backend=backend)
    sidecar.start()
    try:
        with urllib.request.urlopen(sidecar.url, timeout=5) as resp:
            s = parse(resp.read().decode())
        assert samples(s, names.DEVICES) == [0.0]
        assert samples(s, names.SIDECAR_UP) == [1.0]
        ((info, _),) = s["llmload_gpu_sidecar_info"]
        assert message in info["reason"]
    finally:
        sidecar.stop()
