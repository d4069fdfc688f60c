"""NotSupported signals are probed once, left out (never exported as 0) and listed once in the log."""

from __future__ import annotations

import logging

import pytest

from llmload.gpu import h200, names
from tests.helpers.gpu import fake_rig, samples

LOGGER = "llmload.gpu"


def records(caplog, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER and text in r.getMessage()]


def test_an_unsupported_signal_is_left_out_not_zero_and_marked_in_signal_supported():
    r = fake_rig([h200(0, unsupported=frozenset({"power", "temperature"})), h200(1)])
    s = r.scrape()
    assert samples(s, names.POWER, gpu="0") == []
    assert samples(s, names.TEMPERATURE, gpu="0") == []
    assert samples(s, names.POWER, gpu="1") == [627.4]
    assert samples(s, names.SIGNAL_SUPPORTED, gpu="0", signal="power") == [0.0]
    assert samples(s, names.SIGNAL_SUPPORTED, gpu="0", signal="temperature") == [0.0]
    assert samples(s, names.SIGNAL_SUPPORTED, gpu="0", signal="sm_clock") == [1.0]


def test_each_signal_is_probed_once_and_then_not_called_again():
    r = fake_rig([h200(0, unsupported=frozenset({"processes", "pcie"}), gpm=False)], samples=5)
    assert r.backend.calls["processes"] == 1  # the probe
    assert r.backend.calls["pcie"] == 1
    assert r.backend.calls["power_w"] == 1 + 5  # probe + one per sample


def test_what_is_left_out_is_logged_once_with_gpus_of_the_same_kind_on_one_line(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    specs = [h200(i, unsupported=frozenset({"pcie", "processes"})) for i in range(3)] + [h200(3)]
    r = fake_rig(specs, samples=4)
    r.tick()
    lines = records(caplog, "not supported, left out")
    assert [line.getMessage() for line in lines] == ["gpu 0-2: not supported, left out: processes"]


def test_pcie_without_gpm_and_without_nvml_throughput_is_listed(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    r = fake_rig([h200(0, gpm=False, unsupported=frozenset({"pcie"}))])
    assert names.PCIE_RX not in r.scrape()
    (line,) = records(caplog, "left out")
    assert line.getMessage() == "gpu 0: not supported, left out: pcie, gpm"


def test_a_signal_that_becomes_unsupported_mid_run_is_dropped_and_logged_once(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    r = fake_rig([h200(0)])
    r.backend.set(0, unsupported=frozenset({"power"}))
    for _ in range(3):
        r.tick()
    s = r.scrape()
    assert names.POWER not in s
    assert samples(s, names.SIGNAL_SUPPORTED, signal="power") == [0.0]
    assert len(records(caplog, "power is no longer supported")) == 1
    calls = r.backend.calls["power_w"]
    r.tick()
    assert r.backend.calls["power_w"] == calls  # not asked again


def test_a_failing_call_skips_the_value_that_tick_logs_once_and_recovers(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    r = fake_rig([h200(0)])
    r.backend.fail(0, "temperature", times=3)
    r.tick()
    s = r.scrape()
    assert names.TEMPERATURE not in s  # no stale value, no 0
    assert samples(s, names.SIGNAL_SUPPORTED, signal="temperature") == [1.0]  # still supported
    r.tick()
    r.tick()
    assert len(records(caplog, "reading temperature failed")) == 1
    r.tick()
    assert samples(r.scrape(), names.TEMPERATURE) == [52.0]
    assert len(records(caplog, "temperature reads again")) == 1


@pytest.mark.parametrize("signal", ["utilization", "memory", "power_limit", "sm_clock", "gpm"])
def test_any_signal_can_be_unsupported(signal):
    r = fake_rig([h200(0, unsupported=frozenset({signal}))])
    s = r.scrape()
    assert samples(s, names.SIGNAL_SUPPORTED, signal=signal) == [0.0]
    assert samples(s, names.UP) == [1.0]
    gone = {
        "utilization": [names.UTILIZATION],
        "memory": [names.MEMORY_USED, names.MEMORY_TOTAL],
        "power_limit": [names.POWER_LIMIT],
        "sm_clock": [names.SM_CLOCK],
        "gpm": [names.SM_ACTIVITY],
    }[signal]
    for name in gone:
        assert name not in s
