"""The sampler runs on its own timer; scrapes read the last sample and cost no backend call; start-up."""

from __future__ import annotations

import time
import urllib.request
from collections import Counter

import pytest
from prometheus_client import generate_latest

from llmload.gpu import FakeNvml, GpuUnavailable, NvmlCallError, Sampler, Sidecar, SidecarConfig, names, probe
from tests.helpers.gpu import fake_rig, parse, samples


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


class SlowNvml(FakeNvml):
    """A backend whose power reading takes ``slow[i]`` seconds of the test's clock on the i-th sample."""

    def __init__(self, clock: list[float], slow: dict[int, float]) -> None:
        super().__init__(1)
        self.clock, self.slow, self.at = clock, slow, []

    def power_w(self, index: int) -> float:
        self.at.append(round(self.clock[0], 6))
        self.clock[0] += self.slow.get(len(self.at), 0.0)
        return super().power_w(index)


def test_the_timer_keeps_a_fixed_rate_and_skips_the_ticks_a_slow_sample_missed():
    clock = [100.0]
    fake = SlowNvml(clock, slow={3: 0.25})  # the 3rd sample takes 2.5 intervals
    fake.open()
    sampler = Sampler(fake, probe(fake, "h"), interval_s=0.1, clock=lambda: clock[0])
    fake.at.clear()  # the probe's own reading
    waits = []

    def wait(seconds: float) -> bool:
        waits.append(round(seconds, 6))
        clock[0] += seconds
        return len(waits) > 6  # stop after six samples

    sampler.run_timer(wait)
    assert fake.at == [100.1, 100.2, 100.3, 100.55, 100.65, 100.75]  # on the interval; after the slow one, at once
    assert waits == [0.1, 0.1, 0.1, 0.0, 0.1, 0.1, 0.1]
    assert sampler.snapshot.samples == 6


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
