"""The one small interface between the sidecar and NVML, its value types, and its errors.

:class:`GpuBackend` has one method per signal. Values come back in base units (ratios
0..1, bytes, watts, hertz, bytes per second) as plain frozen dataclasses, so nothing
above this layer knows NVML's units (mW, MHz, KB/s, percent). Two implementations:
:class:`~llmload.gpu.nvml.NvmlBackend` over the real ``pynvml`` module and
:class:`~llmload.gpu.fake.FakeNvml` for tests, benchmarks and ``--fake-gpus``.

GPUs are addressed by NVML index; a MIG instance by ``(index, gi_id)`` (its GPU
instance id), only where a method says so. Every method raises one of:

::

    GpuError                  base (an llmload error)
    ├── GpuUnavailable        no library, no driver, no GPU: from open() only (the sidecar exits 3)
    ├── Unsupported           NVML says NotSupported / FunctionNotFound / NoPermission: leave the signal out
    ├── GpuLost               GPU is lost / needs a reset / unknown error: mark the GPU down, keep serving
    └── NvmlCallError         anything else (a timeout, ...): skip this value this tick

GPM ("GPU performance monitoring", Hopper and newer) works on pairs of samples: the
caller takes :meth:`GpuBackend.gpm_sample` on its timer, asks :meth:`GpuBackend.gpm_metrics`
for the ratios between two consecutive ones, and gives the older back with
:meth:`GpuBackend.gpm_release`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from llmload.errors import LlmloadError

__all__ = [
    "DeviceInfo",
    "GpmMetrics",
    "GpuBackend",
    "GpuError",
    "GpuLost",
    "GpuUnavailable",
    "MemoryInfo",
    "MigInstance",
    "NvmlCallError",
    "ProcessMemory",
    "Unsupported",
    "Utilization",
]


class GpuError(LlmloadError):
    """Base of the GPU backend's errors."""


class GpuUnavailable(GpuError):
    """No usable GPU: the library, the driver or the devices are missing. One line: what and how to fix."""


class Unsupported(GpuError):
    """This GPU (or driver, or permission) does not provide the signal: leave it out, do not export 0."""


class GpuLost(GpuError):
    """The GPU stopped answering (NVML GPU_IS_LOST, RESET_REQUIRED, UNKNOWN)."""


class NvmlCallError(GpuError):
    """Any other failed call; the value is skipped for this sample."""


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """Identity of one physical GPU: what its labels are made of."""

    index: int
    name: str  # modelName, e.g. "NVIDIA H200"
    uuid: str  # "GPU-..."
    pci_bus_id: str  # "00000000:83:00.0"
    minor: int | None = None  # /dev/nvidia<minor>; None where NVML has none (Windows)


@dataclass(frozen=True, slots=True)
class MigInstance:
    """One MIG device (GPU instance) of a MIG-enabled GPU."""

    gi_id: int  # GPU instance id (dcgm-exporter's GPU_I_ID)
    profile: str  # e.g. "3g.71gb" (GPU_I_PROFILE)
    uuid: str  # "MIG-..."


@dataclass(frozen=True, slots=True)
class Utilization:
    """NVML's coarse, temporal utilization over its own sample window (1/6 s to 1 s)."""

    gpu: float  # fraction of time at least one kernel ran
    memory_busy: float  # fraction of time device memory was read or written: NOT bandwidth


@dataclass(frozen=True, slots=True)
class MemoryInfo:
    total: int
    used: int
    free: int


@dataclass(frozen=True, slots=True)
class ProcessMemory:
    pid: int
    used_bytes: int | None  # None where the driver cannot tell (Windows WDDM)
    gi_id: int | None = None  # GPU instance of the process on a MIG-enabled GPU


@dataclass(frozen=True, slots=True)
class GpmMetrics:
    """GPM ratios between two samples; a field is None where that metric failed or is not finite."""

    sm_activity: float | None = None  # SM_UTIL / 100
    dram_bandwidth: float | None = None  # DRAM_BW_UTIL / 100: used / theoretical peak bandwidth
    pcie_rx: float | None = None  # bytes per second
    pcie_tx: float | None = None


class GpuBackend(Protocol):
    """What the sidecar needs from NVML. ``index``: NVML device index."""

    name: str

    def open(self) -> None:
        """Start (``nvmlInit``); raises :class:`GpuUnavailable` with an actionable one-line message."""

    def close(self) -> None:
        """Release GPM samples and shut NVML down."""

    def driver_version(self) -> str: ...

    def device_count(self) -> int: ...

    def device(self, index: int) -> DeviceInfo: ...

    def mig_instances(self, index: int) -> tuple[MigInstance, ...]:
        """The MIG instances of a MIG-enabled GPU; ``()`` when MIG is off."""

    def utilization(self, index: int) -> Utilization: ...

    def memory(self, index: int, gi_id: int | None = None) -> MemoryInfo:
        """The GPU's memory, or one MIG instance's with ``gi_id``."""

    def power_w(self, index: int) -> float: ...

    def power_limit_w(self, index: int) -> float: ...

    def temperature_c(self, index: int) -> float: ...

    def sm_clock_hz(self, index: int) -> float: ...

    def pcie(self, index: int) -> tuple[float, float]:
        """``(rx, tx)`` in bytes per second (NVML: two 20 ms windows, blocking)."""

    def processes(self, index: int) -> tuple[ProcessMemory, ...]: ...

    def gpm_supported(self, index: int) -> bool: ...

    def gpm_sample(self, index: int, gi_id: int | None = None) -> Any:
        """A new GPM sample of the GPU, or of one MIG instance with ``gi_id``."""

    def gpm_metrics(self, earlier: Any, later: Any) -> GpmMetrics: ...

    def gpm_release(self, sample: Any) -> None: ...
