"""Contract tests: :class:`NvmlBackend` against the real ``pynvml`` module, its functions monkeypatched.

The module's names, constants, ctypes structs and exception classes are the real ones
(``nvidia-ml-py`` is in the dev extra); only the functions that would reach the driver
answer from a :class:`FakeNvml` in NVML's own units (see ``tests.helpers.pynvml_patch``). The same
GPUs through both backends must export the same series.
"""

from __future__ import annotations

import math
import sys

import pynvml
import pytest

from llmload.gpu import (
    INSTALL_HINT,
    FakeNvml,
    GpuLost,
    GpuUnavailable,
    NvmlBackend,
    NvmlCallError,
    ProcessMemory,
    Unsupported,
    h200,
    h200_mig,
    names,
)
from tests.helpers.clock import FakeClock
from tests.helpers.gpu import rig, samples
from tests.helpers.pynvml_patch import patch_pynvml


def both(specs_factory, monkeypatch, **kw):
    """The same GPUs through the fake and through NvmlBackend over the patched pynvml."""
    c1, c2 = FakeClock(), FakeClock()
    direct = rig(FakeNvml(specs_factory(), clock=c1), c1, **kw)
    fake = FakeNvml(specs_factory(), clock=c2)
    rec = patch_pynvml(monkeypatch, fake)
    via_nvml = rig(NvmlBackend(), c2, **kw)
    return direct, via_nvml, rec


def normalized(scraped):
    out = {}
    for name, rows in scraped.items():
        if name.startswith("llmload_gpu_sidecar_info") or name.startswith("llmload_gpu_sample_duration"):
            continue
        # 6 significant digits: NVML's whole KB/s, MHz, mW and percent quantize a little
        out[name] = sorted((tuple(sorted(lab.items())), float(f"{v:.6g}")) for lab, v in rows)
    return out


@pytest.mark.parametrize("dcgm_names", [False, True])
def test_nvml_backend_exports_what_the_fake_does_units_and_all(monkeypatch, dcgm_names):
    def specs():
        return [
            h200(0),
            h200_mig(1),
            h200(2, gpm=False, unsupported=frozenset({"processes"}), minor=None),
            h200(3, utilization=0.42, memory_busy=0.33, power_w=212.25, sm_clock_hz=1755e6),
        ]

    direct, via_nvml, rec = both(specs, monkeypatch, dcgm_names=dcgm_names)
    a, b = normalized(direct.scrape()), normalized(via_nvml.scrape())
    assert a == b
    assert "nvmlDeviceGetUtilizationRates" in rec.calls and "nvmlGpmMetricsGet" in rec.calls
    if not dcgm_names:
        s = via_nvml.scrape()
        assert samples(s, names.SM_CLOCK, gpu="3") == [1.755e9]  # MHz → Hz
        assert samples(s, names.POWER, gpu="3") == [212.25]  # mW → W
        assert samples(s, names.UTILIZATION, gpu="3") == [0.42]  # % → ratio
        assert samples(s, names.MEMORY_BANDWIDTH, gpu="2", source="nvml_memory_busy") == [0.07]
        assert samples(s, names.PCIE_RX, gpu="2") == [round(1.2e9 / 1024) * 1024]  # KB/s → B/s
        assert samples(s, names.PCIE_RX, gpu="0") == [pytest.approx(1.2e9)]  # GPM MiB/s → B/s
        assert {lab["device"] for lab, _ in s[names.UP]} == {"nvidia0", "nvidia1", "nvidia2", "nvidia3"}


def test_real_exception_classes_map_to_the_backend_errors(monkeypatch):
    fake = FakeNvml([h200(0)])
    patch_pynvml(monkeypatch, fake)
    b = NvmlBackend()
    b.open()
    cases = [
        (pynvml.NVMLError_NotSupported(), Unsupported),
        (pynvml.NVMLError_NoPermission(), Unsupported),
        (pynvml.NVMLError_FunctionNotFound(), Unsupported),
        (pynvml.NVMLLibraryMismatchError("unversioned"), Unsupported),
        (pynvml.NVMLError_GpuIsLost(), GpuLost),
        (pynvml.NVMLError_ResetRequired(), GpuLost),
        (pynvml.NVMLError_Unknown(), GpuLost),
        (pynvml.NVMLError_Timeout(), NvmlCallError),
    ]
    for raised, expected in cases:

        def fail(handle, _e=raised):
            raise _e

        monkeypatch.setattr(pynvml, "nvmlDeviceGetPowerUsage", fail)
        with pytest.raises(expected):
            b.power_w(0)


def test_a_binding_missing_from_an_old_nvidia_ml_py_is_unsupported(monkeypatch):
    patch_pynvml(monkeypatch, FakeNvml([h200(0)]))
    monkeypatch.delattr(pynvml, "nvmlGpmQueryDeviceSupport")
    b = NvmlBackend()
    b.open()
    with pytest.raises(Unsupported, match="upgrade"):
        b.gpm_supported(0)


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        (pynvml.NVMLError_LibraryNotFound, "libnvidia-ml.so.1 not found"),
        (pynvml.NVMLError_DriverNotLoaded, "kernel driver is not loaded"),
        (pynvml.NVMLError_NoPermission, "no permission"),
        (pynvml.NVMLError_Unknown, "nvidia-smi"),
    ],
)
def test_nvml_init_errors_become_one_actionable_line(monkeypatch, error, hint):
    def init():
        raise error()

    monkeypatch.setattr(pynvml, "nvmlInit", init)
    with pytest.raises(GpuUnavailable) as e:
        NvmlBackend().open()
    assert hint in str(e.value)
    assert "\n" not in str(e.value)


def test_the_real_nvml_init_without_a_driver_is_library_not_found():
    # this machine has no NVIDIA driver: the real, unpatched call
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        pass
    else:  # pragma: no cover (a GPU host)
        pynvml.nvmlShutdown()
        pytest.skip("an NVIDIA driver is present")
    with pytest.raises(GpuUnavailable, match="libnvidia-ml.so.1 not found"):
        NvmlBackend().open()


def test_without_nvidia_ml_py_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml → ImportError
    with pytest.raises(GpuUnavailable) as e:
        NvmlBackend().open()
    assert INSTALL_HINT in str(e.value)
    assert INSTALL_HINT == "install the gpu extra: pip install 'llmload[gpu]' (nvidia-ml-py)"


def test_memory_falls_back_to_v1_when_the_driver_lacks_v2(monkeypatch):
    patch_pynvml(monkeypatch, FakeNvml([h200(0)]))
    patched = pynvml.nvmlDeviceGetMemoryInfo

    def memory(handle, version=None):
        if version is not None:
            raise pynvml.NVMLError_FunctionNotFound()
        return patched(handle)

    monkeypatch.setattr(pynvml, "nvmlDeviceGetMemoryInfo", memory)
    b = NvmlBackend()
    b.open()
    assert b.memory(0).used == 33_934_016_512


def test_temperature_uses_the_versioned_call_and_falls_back_on_older_drivers(monkeypatch):
    rec = patch_pynvml(monkeypatch, FakeNvml([h200(0)]))
    b = NvmlBackend()
    b.open()
    assert b.temperature_c(0) == 52.0
    assert rec.calls[-1] == "nvmlDeviceGetTemperatureV"

    def old_driver(handle, sensor):
        raise pynvml.NVMLError_FunctionNotFound()

    monkeypatch.setattr(pynvml, "nvmlDeviceGetTemperatureV", old_driver)
    assert b.temperature_c(0) == 52.0
    assert b.temperature_c(0) == 52.0
    assert rec.calls[-2:] == ["nvmlDeviceGetTemperature", "nvmlDeviceGetTemperature"]


def test_process_memory_none_and_mig_instance_ids(monkeypatch):
    spec = h200_mig(0, processes=(ProcessMemory(7, None, gi_id=1), ProcessMemory(8, 1 << 30, gi_id=5)))
    patch_pynvml(monkeypatch, FakeNvml([spec, h200(1)]))
    b = NvmlBackend()
    b.open()
    assert b.processes(0) == (ProcessMemory(7, None, 1), ProcessMemory(8, 1 << 30, 5))
    assert {p.gi_id for p in b.processes(1)} == {None}  # 0xFFFFFFFF: not on a MIG instance


def test_mig_enumeration_skips_empty_slots(monkeypatch):
    rec = patch_pynvml(monkeypatch, FakeNvml([h200_mig(0), h200(1)]))
    b = NvmlBackend()
    b.open()
    layout = [(m.gi_id, m.profile) for m in b.mig_instances(0)]
    assert layout == [(1, "3g.71gb"), (5, "2g.35gb"), (13, "1g.18gb")]
    assert rec.calls.count("nvmlDeviceGetMigDeviceHandleByIndex") == 7  # every slot, empty ones raise NotFound
    assert b.mig_instances(1) == ()
    assert b.memory(0, 5).total == h200_mig(0).mig[1].memory_total


def test_gpm_metric_errors_and_nan_are_left_out(monkeypatch):
    clock = FakeClock()
    rec = patch_pynvml(monkeypatch, FakeNvml([h200(0)], clock=clock))
    rec.metric_errors[pynvml.NVML_GPM_METRIC_PCIE_RX_PER_SEC] = pynvml.NVML_ERROR_NOT_SUPPORTED
    rec.metric_values[pynvml.NVML_GPM_METRIC_SM_UTIL] = math.nan
    b = NvmlBackend()
    b.open()
    first = b.gpm_sample(0)
    clock.advance(1.0)
    second = b.gpm_sample(0)
    m = b.gpm_metrics(first, second)
    assert m.sm_activity is None
    assert m.pcie_rx is None
    assert m.dram_bandwidth == pytest.approx(0.31)
    assert m.pcie_tx == pytest.approx(0.3e9)


def test_gpm_samples_are_reused_and_freed_at_close(monkeypatch):
    clock = FakeClock()
    fake = FakeNvml([h200(0), h200_mig(1)], clock=clock)
    rec = patch_pynvml(monkeypatch, fake)
    r = rig(NvmlBackend(), clock, samples=20)
    allocated = rec.calls.count("nvmlGpmSampleAlloc")
    # per GPU or MIG instance: the held sample + the new one (+ the probe's, reused)
    assert allocated <= 2 * (1 + 3)
    assert rec.calls.count("nvmlGpmSampleGet") >= 20
    r.backend.close()
    assert sorted(rec.freed) == sorted(rec.samples)
    assert rec.shutdown


def test_a_gpu_lost_inside_nvml_is_marked_down(monkeypatch):
    clock = FakeClock()
    fake = FakeNvml([h200(0), h200(1)], clock=clock)
    patch_pynvml(monkeypatch, fake)
    r = rig(NvmlBackend(), clock)
    fake.lose(0)
    r.tick()
    s = r.scrape()
    assert samples(s, names.UP, gpu="0") == [0.0]
    assert samples(s, names.UP, gpu="1") == [1.0]
    assert samples(s, names.POWER, gpu="0") == []
