"""Drive the real ``pynvml`` module from a :class:`FakeNvml`, for contract tests of :class:`NvmlBackend`.

:func:`patch_pynvml` replaces the ``nvml*`` functions :class:`NvmlBackend` calls with
ones that answer in NVML's own units and types (percent in ``c_nvmlUtilization_t``,
mW, MHz, KB/s, ``c_nvmlMemory_v2_t``, friendly process objects with ``usedGpuMemory``
``None``, GPM samples as real ``c_nvmlGpmSample_t`` pointers and ``nvmlGpmMetricsGet``
filling ``c_nvmlGpmMetricsGet_t``), and raise the module's real exception classes. The
module's constants, structs and exception tree stay the real ones, so a wrong name,
constant or unit in :class:`NvmlBackend` fails here.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any

import pynvml

from llmload.gpu import FakeNvml, GpuLost, NvmlCallError, Unsupported

__all__ = ["Handle", "PatchedNvml", "patch_pynvml"]

MIG_SLOTS = 7  # nvmlDeviceGetMaxMigDeviceCount of an H200


@dataclass(frozen=True)
class Handle:
    index: int
    gi: int | None = None


@dataclass
class PatchedNvml:
    fake: FakeNvml
    calls: list[str] = field(default_factory=list)
    samples: dict[int, Any] = field(default_factory=dict)  # address → fake GPM sample (None: allocated, empty)
    buffers: list[Any] = field(default_factory=list)
    freed: list[int] = field(default_factory=list)
    metric_errors: dict[int, int] = field(default_factory=dict)  # GPM metric id → NVML error code
    metric_values: dict[int, float] = field(default_factory=dict)  # GPM metric id → forced value (e.g. nan)
    shutdown: bool = False


def _nvml_errors(fn):
    """Raise the fake's errors as the real pynvml exception classes."""

    def wrapper(*args: Any) -> Any:
        try:
            return fn(*args)
        except Unsupported:
            raise pynvml.NVMLError_NotSupported() from None
        except GpuLost:
            raise pynvml.NVMLError_GpuIsLost() from None
        except NvmlCallError:
            raise pynvml.NVMLError_Timeout() from None

    wrapper.__name__ = fn.__name__
    return wrapper


def patch_pynvml(monkeypatch: Any, fake: FakeNvml) -> PatchedNvml:
    """Make the real ``pynvml`` answer from ``fake``; returns the recorder."""
    rec = PatchedNvml(fake)
    f = fake

    def mig_of(h: Handle, slot: int) -> Handle:
        instances = f.mig_instances(h.index)
        if slot % 2 or slot // 2 >= len(instances):  # instances sit in even slots; the others are empty
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return Handle(h.index, instances[slot // 2].gi_id)

    def name(h: Handle) -> str:
        base = f.device(h.index).name
        if h.gi is None:
            return base
        return f"{base} MIG {next(m.profile for m in f.mig_instances(h.index) if m.gi_id == h.gi)}"

    def uuid(h: Handle) -> str:
        if h.gi is None:
            return f.device(h.index).uuid
        return next(m.uuid for m in f.mig_instances(h.index) if m.gi_id == h.gi)

    def pci(h: Handle) -> Any:
        info = pynvml.nvmlPciInfo_t()
        info.busId = f.device(h.index).pci_bus_id.encode()
        return info

    def minor(h: Handle) -> int:
        m = f.device(h.index).minor
        if m is None:
            raise Unsupported("no minor number")
        return m

    def mig_mode(h: Handle) -> list[int]:
        mode = pynvml.NVML_DEVICE_MIG_ENABLE if f.mig_instances(h.index) else pynvml.NVML_DEVICE_MIG_DISABLE
        return [mode, mode]

    def utilization(h: Handle) -> Any:
        u = f.utilization(h.index)
        out = pynvml.c_nvmlUtilization_t()
        out.gpu, out.memory = round(u.gpu * 100), round(u.memory_busy * 100)
        return out

    def memory(h: Handle, version: Any = None) -> Any:
        m = f.memory(h.index, h.gi)
        if version is None:
            out = pynvml.c_nvmlMemory_t()
        else:
            assert version == pynvml.nvmlMemory_v2
            out = pynvml.c_nvmlMemory_v2_t()
            out.version = version
        out.total, out.used, out.free = m.total, m.used, m.free
        return out

    def temperature(h: Handle, sensor: int) -> int:
        assert sensor == pynvml.NVML_TEMPERATURE_GPU
        return round(f.temperature_c(h.index))

    def clock(h: Handle, kind: int) -> int:
        assert kind == pynvml.NVML_CLOCK_SM
        return round(f.sm_clock_hz(h.index) / 1e6)

    def pcie(h: Handle, counter: int) -> int:
        rx, tx = f.pcie(h.index)
        value = rx if counter == pynvml.NVML_PCIE_UTIL_RX_BYTES else tx
        assert counter in (pynvml.NVML_PCIE_UTIL_RX_BYTES, pynvml.NVML_PCIE_UTIL_TX_BYTES)
        return round(value / 1024)

    def processes(h: Handle) -> list[Any]:
        out = []
        for p in f.processes(h.index):
            gi = 0xFFFFFFFF if p.gi_id is None else p.gi_id
            out.append(
                pynvml.nvmlFriendlyObject(
                    {"pid": p.pid, "usedGpuMemory": p.used_bytes, "gpuInstanceId": gi, "computeInstanceId": 0}
                )
            )
        return out

    def gpm_support(h: Handle) -> Any:
        out = pynvml.c_nvmlGpmSupport_t()
        out.isSupportedDevice = int(f.gpm_supported(h.index))
        return out

    def alloc() -> Any:
        buf = ctypes.c_uint64(len(rec.buffers))
        rec.buffers.append(buf)
        rec.samples[ctypes.addressof(buf)] = None
        return ctypes.cast(ctypes.pointer(buf), pynvml.c_nvmlGpmSample_t)

    def address(sample: Any) -> int:
        return ctypes.cast(sample, ctypes.c_void_p).value

    def sample_get(h: Handle, sample: Any) -> Any:
        rec.samples[address(sample)] = f.gpm_sample(h.index)
        return sample

    def mig_sample_get(h: Handle, gi: int, sample: Any) -> Any:
        rec.samples[address(sample)] = f.gpm_sample(h.index, gi)
        return sample

    def metrics_get(req: Any) -> Any:
        assert req.version == pynvml.NVML_GPM_METRICS_GET_VERSION
        m = f.gpm_metrics(rec.samples[address(req.sample1)], rec.samples[address(req.sample2)])
        by_id = {
            pynvml.NVML_GPM_METRIC_SM_UTIL: None if m.sm_activity is None else m.sm_activity * 100,
            pynvml.NVML_GPM_METRIC_DRAM_BW_UTIL: None if m.dram_bandwidth is None else m.dram_bandwidth * 100,
            pynvml.NVML_GPM_METRIC_PCIE_RX_PER_SEC: None if m.pcie_rx is None else m.pcie_rx / (1 << 20),
            pynvml.NVML_GPM_METRIC_PCIE_TX_PER_SEC: None if m.pcie_tx is None else m.pcie_tx / (1 << 20),
        }
        for k in range(req.numMetrics):
            metric = req.metrics[k]
            value = rec.metric_values.get(metric.metricId, by_id.get(metric.metricId))
            error = rec.metric_errors.get(metric.metricId)
            if error is None and value is None:
                error = pynvml.NVML_ERROR_NOT_SUPPORTED
            metric.nvmlReturn = pynvml.NVML_SUCCESS if error is None else error
            metric.value = 0.0 if error is not None else value
        return req

    def free(sample: Any) -> None:
        rec.freed.append(address(sample))

    def shutdown() -> None:
        rec.shutdown = True

    table: dict[str, Any] = {
        "nvmlInit": lambda: None,
        "nvmlShutdown": shutdown,
        "nvmlSystemGetDriverVersion": f.driver_version,
        "nvmlDeviceGetCount": f.device_count,
        "nvmlDeviceGetHandleByIndex": lambda i: Handle(i),
        "nvmlDeviceGetName": name,
        "nvmlDeviceGetUUID": uuid,
        "nvmlDeviceGetPciInfo_v3": pci,
        "nvmlDeviceGetMinorNumber": minor,
        "nvmlDeviceGetMigMode": mig_mode,
        "nvmlDeviceGetMaxMigDeviceCount": lambda h: MIG_SLOTS,
        "nvmlDeviceGetMigDeviceHandleByIndex": mig_of,
        "nvmlDeviceGetGpuInstanceId": lambda h: h.gi,
        "nvmlDeviceGetUtilizationRates": utilization,
        "nvmlDeviceGetMemoryInfo": memory,
        "nvmlDeviceGetPowerUsage": lambda h: round(f.power_w(h.index) * 1000),
        "nvmlDeviceGetEnforcedPowerLimit": lambda h: round(f.power_limit_w(h.index) * 1000),
        "nvmlDeviceGetTemperatureV": temperature,
        "nvmlDeviceGetTemperature": temperature,
        "nvmlDeviceGetClockInfo": clock,
        "nvmlDeviceGetPcieThroughput": pcie,
        "nvmlDeviceGetComputeRunningProcesses": processes,
        "nvmlGpmQueryDeviceSupport": gpm_support,
        "nvmlGpmSampleAlloc": alloc,
        "nvmlGpmSampleGet": sample_get,
        "nvmlGpmMigSampleGet": mig_sample_get,
        "nvmlGpmMetricsGet": metrics_get,
        "nvmlGpmSampleFree": free,
    }
    for fn_name, fn in table.items():
        assert hasattr(pynvml, fn_name), f"pynvml has no {fn_name}: the backend calls a name that does not exist"
        monkeypatch.setattr(pynvml, fn_name, _recorded(rec, fn_name, _nvml_errors(fn)))
    return rec


def _recorded(rec: PatchedNvml, name: str, fn: Any) -> Any:
    def recorded(*args: Any) -> Any:
        rec.calls.append(name)
        return fn(*args)

    recorded.__name__ = name
    return recorded
