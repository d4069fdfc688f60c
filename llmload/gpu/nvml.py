""":class:`NvmlBackend`: the :class:`~llmload.gpu.backend.GpuBackend` over the real ``pynvml``.

``pynvml`` is the module of the ``nvidia-ml-py`` package (the ``gpu`` extra), imported
lazily in :meth:`NvmlBackend.open` — never the ``pynvml`` *package* from PyPI, whose
import hook warns on every import. Unit conversions happen here and nowhere else:
power mW → W, clocks MHz → Hz, PCIe KB/s → B/s (× 1024), percentages → ratios, GPM
PCIe MiB/s → B/s.

NVML errors are sorted by their code (``NVMLError.value``) into the backend's error
tree (see :mod:`llmload.gpu.backend`); a binding missing from an old ``nvidia-ml-py``
(``AttributeError``) counts as unsupported. Handles are looked up once and cached.
Call it from one thread (the sampler's): NVML calls are not guarded here.
"""

from __future__ import annotations

import math
import re
from typing import Any

from llmload.gpu.backend import (
    DeviceInfo,
    GpmMetrics,
    GpuLost,
    GpuUnavailable,
    MemoryInfo,
    MigInstance,
    NvmlCallError,
    ProcessMemory,
    Unsupported,
    Utilization,
)

__all__ = ["INSTALL_HINT", "NvmlBackend", "import_pynvml"]

INSTALL_HINT = "install the gpu extra: pip install 'llmload[gpu]' (nvidia-ml-py)"

_KB = 1024.0
_MIB = float(1 << 20)
_NOT_AVAILABLE_UINT = 0xFFFFFFFF
_PROFILE = re.compile(r"MIG\s+(\S+)")
# NVML error codes (pynvml.NVML_ERROR_*), by name so that they are read from the module.
_UNSUPPORTED = ("NVML_ERROR_NOT_SUPPORTED", "NVML_ERROR_FUNCTION_NOT_FOUND", "NVML_ERROR_NO_PERMISSION")
_LOST = ("NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_RESET_REQUIRED", "NVML_ERROR_UNKNOWN")
_GPM_IDS = ("NVML_GPM_METRIC_SM_UTIL", "NVML_GPM_METRIC_DRAM_BW_UTIL")
_GPM_PCIE_IDS = ("NVML_GPM_METRIC_PCIE_RX_PER_SEC", "NVML_GPM_METRIC_PCIE_TX_PER_SEC")


def import_pynvml() -> Any:
    """The ``pynvml`` module of ``nvidia-ml-py``; :class:`GpuUnavailable` with the install hint if missing."""
    try:
        import pynvml
    except ImportError:
        raise GpuUnavailable(f"the NVML bindings are not installed; {INSTALL_HINT}") from None
    return pynvml


class NvmlBackend:
    """NVML through ``pynvml``. ``nvml``: a module to use instead of importing ``pynvml`` (tests)."""

    name = "nvml"

    def __init__(self, nvml: Any | None = None) -> None:
        self._nv: Any = nvml  # the pynvml module (untyped) or a test's stand-in; None before open()
        self._handles: dict[int, Any] = {}
        self._mig: dict[tuple[int, int], Any] = {}
        self._pool: list[Any] = []  # released GPM samples, reused before allocating
        self._allocated: list[Any] = []
        self._unsupported: frozenset[int] = frozenset()
        self._lost: frozenset[int] = frozenset()
        self._temperature_v = True
        self._open = False

    # -- life cycle ---------------------------------------------------------------------------

    def open(self) -> None:
        nv = self._nv if self._nv is not None else import_pynvml()
        self._nv = nv
        self._unsupported = frozenset(getattr(nv, n) for n in _UNSUPPORTED if hasattr(nv, n))
        self._lost = frozenset(getattr(nv, n) for n in _LOST if hasattr(nv, n))
        try:
            nv.nvmlInit()
        except nv.NVMLError as e:
            raise GpuUnavailable(_init_message(nv, e)) from None
        self._open = True

    def close(self) -> None:
        if not self._open:
            return
        nv = self._nv
        for sample in self._allocated:
            try:
                nv.nvmlGpmSampleFree(sample)
            except Exception:  # shutting down: nothing to do about it
                pass
        self._allocated.clear()
        self._pool.clear()
        try:
            nv.nvmlShutdown()
        except nv.NVMLError:
            pass
        self._open = False

    # -- inventory ----------------------------------------------------------------------------

    def driver_version(self) -> str:
        return _text(self._call(None, "nvmlSystemGetDriverVersion"))

    def device_count(self) -> int:
        return int(self._call(None, "nvmlDeviceGetCount"))

    def device(self, index: int) -> DeviceInfo:
        h = self._handle(index)
        name = _text(self._call(index, "nvmlDeviceGetName", h))
        uuid = _text(self._call(index, "nvmlDeviceGetUUID", h))
        try:
            bus = _text(self._call(index, "nvmlDeviceGetPciInfo_v3", h).busId)
        except Unsupported:
            bus = _text(self._call(index, "nvmlDeviceGetPciInfo", h).busId)
        try:
            minor: int | None = int(self._call(index, "nvmlDeviceGetMinorNumber", h))
        except Unsupported:
            minor = None
        return DeviceInfo(index=index, name=name, uuid=uuid, pci_bus_id=bus, minor=minor)

    def mig_instances(self, index: int) -> tuple[MigInstance, ...]:
        nv = self._nv
        h = self._handle(index)
        try:
            current, _pending = self._call(index, "nvmlDeviceGetMigMode", h)
        except Unsupported:  # no MIG on this GPU
            return ()
        if current != getattr(nv, "NVML_DEVICE_MIG_ENABLE", 1):
            return ()
        out = []
        for slot in range(int(self._call(index, "nvmlDeviceGetMaxMigDeviceCount", h))):
            try:
                mig = nv.nvmlDeviceGetMigDeviceHandleByIndex(h, slot)
            except nv.NVMLError as e:
                if e.value == nv.NVML_ERROR_NOT_FOUND:  # an empty slot
                    continue
                raise self._translate(index, e) from None
            gi = int(self._call(index, "nvmlDeviceGetGpuInstanceId", mig))
            name = _text(self._call(index, "nvmlDeviceGetName", mig))  # "NVIDIA H200 MIG 3g.71gb"
            match = _PROFILE.search(name)
            uuid = _text(self._call(index, "nvmlDeviceGetUUID", mig))
            self._mig[(index, gi)] = mig
            out.append(MigInstance(gi_id=gi, profile=match.group(1) if match else "", uuid=uuid))
        return tuple(sorted(out, key=lambda m: m.gi_id))

    # -- signals ------------------------------------------------------------------------------

    def utilization(self, index: int) -> Utilization:
        u = self._call(index, "nvmlDeviceGetUtilizationRates", self._handle(index))
        return Utilization(gpu=u.gpu / 100.0, memory_busy=u.memory / 100.0)

    def memory(self, index: int, gi_id: int | None = None) -> MemoryInfo:
        nv = self._nv
        h = self._handle(index) if gi_id is None else self._mig_handle(index, gi_id)
        v2 = getattr(nv, "nvmlMemory_v2", None)
        try:  # v2: "used" excludes the driver's reserved memory, as nvidia-smi shows it
            m = self._call(index, "nvmlDeviceGetMemoryInfo", h, v2) if v2 else None
        except Unsupported:  # a driver without the _v2 entry point
            m = None
        if m is None:
            m = self._call(index, "nvmlDeviceGetMemoryInfo", h)
        return MemoryInfo(total=int(m.total), used=int(m.used), free=int(m.free))

    def power_w(self, index: int) -> float:
        return self._call(index, "nvmlDeviceGetPowerUsage", self._handle(index)) / 1000.0

    def power_limit_w(self, index: int) -> float:
        return self._call(index, "nvmlDeviceGetEnforcedPowerLimit", self._handle(index)) / 1000.0

    def temperature_c(self, index: int) -> float:
        h, sensor = self._handle(index), self._nv.NVML_TEMPERATURE_GPU
        if self._temperature_v:  # nvmlDeviceGetTemperature is deprecated ("removed in CUDA 14.0")
            try:
                return float(self._call(index, "nvmlDeviceGetTemperatureV", h, sensor))
            except Unsupported:  # an older driver or binding: use the old call from now on, if it works
                value = float(self._call(index, "nvmlDeviceGetTemperature", h, sensor))
                self._temperature_v = False
                return value
        return float(self._call(index, "nvmlDeviceGetTemperature", h, sensor))

    def sm_clock_hz(self, index: int) -> float:
        nv = self._nv
        return self._call(index, "nvmlDeviceGetClockInfo", self._handle(index), nv.NVML_CLOCK_SM) * 1e6

    def pcie(self, index: int) -> tuple[float, float]:
        nv = self._nv
        h = self._handle(index)
        rx = self._call(index, "nvmlDeviceGetPcieThroughput", h, nv.NVML_PCIE_UTIL_RX_BYTES)
        tx = self._call(index, "nvmlDeviceGetPcieThroughput", h, nv.NVML_PCIE_UTIL_TX_BYTES)
        return rx * _KB, tx * _KB

    def processes(self, index: int) -> tuple[ProcessMemory, ...]:
        procs = self._call(index, "nvmlDeviceGetComputeRunningProcesses", self._handle(index))
        out = []
        for p in procs:
            gi = getattr(p, "gpuInstanceId", None)
            used = p.usedGpuMemory
            out.append(
                ProcessMemory(
                    pid=int(p.pid),
                    used_bytes=None if used is None else int(used),
                    gi_id=None if gi is None or gi == _NOT_AVAILABLE_UINT else int(gi),
                )
            )
        return tuple(out)

    # -- GPM ----------------------------------------------------------------------------------

    def gpm_supported(self, index: int) -> bool:
        support = self._call(index, "nvmlGpmQueryDeviceSupport", self._handle(index))
        return bool(support.isSupportedDevice)

    def gpm_sample(self, index: int, gi_id: int | None = None) -> Any:
        sample = self._pool.pop() if self._pool else self._alloc(index)
        try:
            if gi_id is None:
                self._call(index, "nvmlGpmSampleGet", self._handle(index), sample)
            else:
                self._call(index, "nvmlGpmMigSampleGet", self._handle(index), gi_id, sample)
        except Exception:
            self._pool.append(sample)
            raise
        return sample

    def gpm_metrics(self, earlier: Any, later: Any) -> GpmMetrics:
        nv = self._nv
        names = (*_GPM_IDS, *_GPM_PCIE_IDS)
        req = nv.c_nvmlGpmMetricsGet_t()
        req.version = nv.NVML_GPM_METRICS_GET_VERSION
        req.numMetrics = len(names)
        req.sample1 = earlier
        req.sample2 = later
        for k, name in enumerate(names):
            req.metrics[k].metricId = getattr(nv, name)
        self._call(None, "nvmlGpmMetricsGet", req)
        values = []
        for k in range(len(names)):
            m = req.metrics[k]
            ok = m.nvmlReturn == nv.NVML_SUCCESS and math.isfinite(m.value)
            values.append(m.value if ok else None)
        sm, dram, rx, tx = values
        return GpmMetrics(
            sm_activity=None if sm is None else sm / 100.0,
            dram_bandwidth=None if dram is None else dram / 100.0,
            pcie_rx=None if rx is None else rx * _MIB,
            pcie_tx=None if tx is None else tx * _MIB,
        )

    def gpm_release(self, sample: Any) -> None:
        self._pool.append(sample)

    # -- plumbing -----------------------------------------------------------------------------

    def _alloc(self, index: int) -> Any:
        sample = self._call(index, "nvmlGpmSampleAlloc")
        self._allocated.append(sample)
        return sample

    def _handle(self, index: int) -> Any:
        h = self._handles.get(index)
        if h is None:
            h = self._handles[index] = self._call(index, "nvmlDeviceGetHandleByIndex", index)
        return h

    def _mig_handle(self, index: int, gi_id: int) -> Any:
        h = self._mig.get((index, gi_id))
        if h is None:
            self.mig_instances(index)  # the layout changed since the probe: look again
            h = self._mig.get((index, gi_id))
        if h is None:
            raise NvmlCallError(f"gpu {index}: no MIG instance with GPU_I_ID {gi_id}")
        return h

    def _call(self, index: int | None, name: str, *args: Any) -> Any:
        """``pynvml.<name>(*args)`` with its errors translated; a binding this nvidia-ml-py lacks is unsupported."""
        nv = self._nv
        fn = getattr(nv, name, None)
        if fn is None:
            raise Unsupported(f"this nvidia-ml-py has no {name}; upgrade it: pip install -U nvidia-ml-py")
        try:
            return fn(*args)
        except nv.NVMLError as e:
            raise self._translate(index, e) from None
        except getattr(nv, "NVMLLibraryMismatchError", ()) as e:  # an unversioned call the driver lacks
            raise Unsupported(f"{name}: {e}") from None

    def _translate(self, index: int | None, e: Any) -> Exception:
        where = "nvml" if index is None else f"gpu {index}"
        if e.value in self._unsupported:
            return Unsupported(f"{where}: {e}")
        if e.value in self._lost:
            return GpuLost(f"{where}: {e}")
        return NvmlCallError(f"{where}: {e}")


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _init_message(nv: Any, e: Any) -> str:
    code = getattr(e, "value", None)
    if code == getattr(nv, "NVML_ERROR_LIBRARY_NOT_FOUND", None):
        hint = (
            "libnvidia-ml.so.1 not found: is the NVIDIA driver installed (and, in a container, the NVIDIA runtime on)?"
        )
    elif code == getattr(nv, "NVML_ERROR_DRIVER_NOT_LOADED", None):
        hint = "the NVIDIA kernel driver is not loaded (nvidia-smi should fail the same way)"
    elif code == getattr(nv, "NVML_ERROR_NO_PERMISSION", None):
        hint = "no permission to open /dev/nvidia*: run as a user that can open them"
    elif code == getattr(nv, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", None):
        hint = "driver library and kernel module versions differ: reboot or reload the driver"
    else:
        hint = "check that nvidia-smi works on this host"
    return f"NVML cannot start ({e}): {hint}"
