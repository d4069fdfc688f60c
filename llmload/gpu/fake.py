""":class:`FakeNvml`: a declarative :class:`~llmload.gpu.backend.GpuBackend` seeded with real H200 figures.

Used by the tests, by ``benchmarks/gpu_sidecar_cost.py`` and by ``llmload gpu-sidecar
--fake-gpus N`` (dashboards and collection without a GPU). It behaves like NVML where
that matters to the sidecar:

* a signal listed in ``FakeGpu.unsupported`` raises :class:`Unsupported` (NotSupported);
* a MIG-enabled GPU has no utilization rates (NVML: not supported with MIG on), memory
  per instance, and GPM per GPU instance;
* :meth:`FakeNvml.lose` makes every later call for that GPU raise :class:`GpuLost`;
* GPM samples are cumulative counters integrated over the fake's clock, so the ratios
  really come from two samples apart in time, as ``nvmlGpmMetricsGet`` computes them.

Values change with :meth:`FakeNvml.set`. ``calls`` counts calls per method, for tests
that check that a scrape costs no backend call.

The seed figures (:func:`h200`, :func:`h200_mig`) are real readings, taken by value from
nvidia_gpu_exporter's captures of an H200 under gpu_burn, driver 590.48.01
(``utkuozdemir/nvidia_gpu_exporter:internal/integration/testdata/
linux-x86_64__nvidia-h200__590.48.01__load.metrics`` and ``...h200-mig...load.metrics``,
quoted in shared/research/gpu_and_server_metrics.md §2.2/§3). Figures that capture
does not hold (GPM ratios, PCIe rates, the MIG instances' split) are marked illustrative.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
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

__all__ = ["H200_MEMORY_TOTAL", "FakeGpu", "FakeMig", "FakeNvml", "h200", "h200_mig"]

#: NVML's memory total of an H200 ("141 GB"): 150754820096 B ≈ 140.4 GiB (capture above).
H200_MEMORY_TOTAL = 150_754_820_096
_DRIVER = "590.48.01"


@dataclass(frozen=True)
class FakeMig:
    """One MIG instance: its own memory and GPM ratios."""

    gi_id: int
    profile: str
    memory_total: int
    memory_used: int
    sm_activity: float = 0.5
    dram_bandwidth: float = 0.2


@dataclass(frozen=True)
class FakeGpu:
    """One fake GPU, values in base units. ``unsupported``: signal names of :data:`llmload.gpu.names.SIGNALS`."""

    name: str = "NVIDIA H200"
    pci_bus_id: str = "00000000:83:00.0"
    minor: int | None = 0
    memory_total: int = H200_MEMORY_TOTAL
    memory_used: int = 33_934_016_512
    memory_free: int = 116_178_026_496
    utilization: float = 1.0  # gpu_burn: 100 % ...
    memory_busy: float = 0.07  # ... with 7 % "memory utilization": busy time, not bandwidth
    sm_activity: float = 0.92  # illustrative (GPM; not in the capture)
    dram_bandwidth: float = 0.31  # illustrative (GPM; not in the capture)
    power_w: float = 627.4
    power_limit_w: float = 700.0
    temperature_c: float = 52.0
    sm_clock_hz: float = 1980e6
    pcie_rx: float = 1.2e9  # illustrative
    pcie_tx: float = 0.3e9  # illustrative
    processes: tuple[ProcessMemory, ...] = (
        ProcessMemory(10291, 2_690_646_016),  # /root/tools/memhog
        ProcessMemory(10293, 1_616_904_192),  # /root/tools/memhog
        ProcessMemory(10309, 29_605_494_784),  # ./gpu_burn
    )
    gpm: bool = True  # Hopper: GPM supported
    mig: tuple[FakeMig, ...] = ()
    unsupported: frozenset[str] = frozenset()
    uuid: str = ""


def _uuid(prefix: str, key: str) -> str:
    return f"{prefix}-{uuid.uuid5(uuid.NAMESPACE_URL, f'llmload-fake/{key}')}"


def h200(index: int = 0, **changes: Any) -> FakeGpu:
    """An H200 under load (real figures, see the module docstring), at NVML ``index``."""
    gpu = FakeGpu(pci_bus_id=f"00000000:{0x83 + index:02X}:00.0", minor=index, uuid=_uuid("GPU", f"gpu{index}"))
    return replace(gpu, **changes)


def h200_mig(index: int = 0, **changes: Any) -> FakeGpu:
    """An H200 with MIG on, three instances (3g.71gb, 2g.35gb, 1g.18gb), under load.

    Real (H200-MIG capture): power 295.01 W, 36 °C, the three processes and their memory.
    Illustrative: the GPU instance ids and each instance's total (its memory slices × 1/8
    of the H200's 150754820096 B), and the GPM ratios.
    """
    eighth = H200_MEMORY_TOTAL // 8
    mig = (
        FakeMig(1, "3g.71gb", 4 * eighth, 14_183_038_976, sm_activity=0.95, dram_bandwidth=0.40),
        FakeMig(5, "2g.35gb", 2 * eighth, 2_300_575_744, sm_activity=0.10, dram_bandwidth=0.05),
        FakeMig(13, "1g.18gb", eighth, 1_226_833_920, sm_activity=0.05, dram_bandwidth=0.02),
    )
    gpu = h200(
        index,
        memory_used=17_782_800_384,
        memory_free=132_329_242_624,
        power_w=295.01,
        temperature_c=36.0,
        processes=(
            ProcessMemory(12267, 14_183_038_976, gi_id=1),  # ./gpu_burn
            ProcessMemory(12249, 2_300_575_744, gi_id=5),  # /root/tools/memhog
            ProcessMemory(12250, 1_226_833_920, gi_id=13),  # /root/tools/memhog
        ),
        mig=mig,
    )
    return replace(gpu, **changes)


@dataclass(frozen=True, slots=True)
class _GpmSample:
    key: tuple[int, int | None]
    t: float
    sm: float  # integrals over time of the ratios, and byte counts
    dram: float
    rx: float
    tx: float


@dataclass
class _Counters:
    t: float
    sm: float = 0.0
    dram: float = 0.0
    rx: float = 0.0
    tx: float = 0.0


@dataclass
class _State:
    gpu: FakeGpu
    lost: bool = False
    failures: Counter[str] = field(default_factory=Counter)  # signal → transient errors still to raise


class FakeNvml:
    """Fake NVML over :class:`FakeGpu` specs (an int ``n``: ``n`` × :func:`h200`).

    ``unavailable``: the message :meth:`open` raises as :class:`GpuUnavailable` (no driver).
    ``clock``: monotonic seconds (GPM integrates over it).
    """

    name = "fake"

    def __init__(
        self,
        gpus: int | Iterable[FakeGpu] = 1,
        *,
        clock: Callable[[], float] = time.monotonic,
        unavailable: str | None = None,
        driver: str = _DRIVER,
    ) -> None:
        specs = [h200(i) for i in range(gpus)] if isinstance(gpus, int) else list(gpus)
        self._states = [_State(g if g.uuid else replace(g, uuid=_uuid("GPU", f"gpu{i}"))) for i, g in enumerate(specs)]
        self._clock = clock
        self._unavailable = unavailable
        self._driver = driver
        self._gpm: dict[tuple[int, int | None], _Counters] = {}
        self.calls: Counter[str] = Counter()
        self.opened = self.closed = False

    # -- test controls ------------------------------------------------------------------------

    def set(self, index: int, **values: Any) -> None:
        """Change GPU ``index``'s values from now on (GPM counters are integrated up to now first)."""
        for key in [k for k in self._gpm if k[0] == index]:
            self._advance(key)
        state = self._states[index]
        state.gpu = replace(state.gpu, **values)

    def lose(self, index: int) -> None:
        """GPU ``index`` falls off the bus: every later call about it raises :class:`GpuLost`."""
        self._states[index].lost = True

    def fail(self, index: int, signal: str, times: int = 1) -> None:
        """The next ``times`` calls for ``signal`` on GPU ``index`` raise :class:`NvmlCallError`."""
        self._states[index].failures[signal] += times

    # -- GpuBackend ---------------------------------------------------------------------------

    def open(self) -> None:
        self.calls["open"] += 1
        if self._unavailable is not None:
            raise GpuUnavailable(self._unavailable)
        self.opened = True

    def close(self) -> None:
        self.calls["close"] += 1
        self.closed = True

    def driver_version(self) -> str:
        self.calls["driver_version"] += 1
        return self._driver

    def device_count(self) -> int:
        self.calls["device_count"] += 1
        return len(self._states)

    def device(self, index: int) -> DeviceInfo:
        g = self._gpu(index, "device", None)
        return DeviceInfo(index=index, name=g.name, uuid=g.uuid, pci_bus_id=g.pci_bus_id, minor=g.minor)

    def mig_instances(self, index: int) -> tuple[MigInstance, ...]:
        g = self._gpu(index, "mig_instances", None)
        return tuple(MigInstance(m.gi_id, m.profile, _uuid("MIG", f"{g.uuid}/{m.gi_id}")) for m in g.mig)

    def utilization(self, index: int) -> Utilization:
        g = self._gpu(index, "utilization", "utilization")
        if g.mig:
            raise Unsupported(f"gpu {index}: Not Supported (utilization rates with MIG enabled)")
        return Utilization(gpu=g.utilization, memory_busy=g.memory_busy)

    def memory(self, index: int, gi_id: int | None = None) -> MemoryInfo:
        g = self._gpu(index, "memory", "memory")
        if gi_id is None:
            return MemoryInfo(total=g.memory_total, used=g.memory_used, free=g.memory_free)
        m = self._mig(g, gi_id)
        return MemoryInfo(total=m.memory_total, used=m.memory_used, free=m.memory_total - m.memory_used)

    def power_w(self, index: int) -> float:
        return self._gpu(index, "power_w", "power").power_w

    def power_limit_w(self, index: int) -> float:
        return self._gpu(index, "power_limit_w", "power_limit").power_limit_w

    def temperature_c(self, index: int) -> float:
        return self._gpu(index, "temperature_c", "temperature").temperature_c

    def sm_clock_hz(self, index: int) -> float:
        return self._gpu(index, "sm_clock_hz", "sm_clock").sm_clock_hz

    def pcie(self, index: int) -> tuple[float, float]:
        g = self._gpu(index, "pcie", "pcie")
        return g.pcie_rx, g.pcie_tx

    def processes(self, index: int) -> tuple[ProcessMemory, ...]:
        return self._gpu(index, "processes", "processes").processes

    def gpm_supported(self, index: int) -> bool:
        g = self._gpu(index, "gpm_supported", None)
        return g.gpm and "gpm" not in g.unsupported

    def gpm_sample(self, index: int, gi_id: int | None = None) -> Any:
        g = self._gpu(index, "gpm_sample", "gpm")
        if not g.gpm:
            raise Unsupported(f"gpu {index}: Not Supported (GPM)")
        if gi_id is not None:
            self._mig(g, gi_id)
        c = self._advance((index, gi_id))
        return _GpmSample((index, gi_id), c.t, c.sm, c.dram, c.rx, c.tx)

    def gpm_metrics(self, earlier: Any, later: Any) -> GpmMetrics:
        self.calls["gpm_metrics"] += 1
        a, b = earlier, later
        self._gpu(b.key[0], "-", None)  # a lost GPU fails here too
        dt = b.t - a.t
        if dt <= 0:
            return GpmMetrics()
        whole_gpu = b.key[1] is None  # PCIe is a whole-GPU metric
        return GpmMetrics(
            sm_activity=(b.sm - a.sm) / dt,
            dram_bandwidth=(b.dram - a.dram) / dt,
            pcie_rx=(b.rx - a.rx) / dt if whole_gpu else None,
            pcie_tx=(b.tx - a.tx) / dt if whole_gpu else None,
        )

    def gpm_release(self, sample: Any) -> None:
        self.calls["gpm_release"] += 1

    # -- plumbing -----------------------------------------------------------------------------

    def _gpu(self, index: int, method: str, signal: str | None) -> FakeGpu:
        if method != "-":
            self.calls[method] += 1
        if not 0 <= index < len(self._states):
            raise NvmlCallError(f"gpu {index}: Invalid Argument")
        state = self._states[index]
        if state.lost:
            raise GpuLost(f"gpu {index}: GPU is lost")
        if signal is not None and signal in state.gpu.unsupported:
            raise Unsupported(f"gpu {index}: Not Supported ({signal})")
        if signal is not None and state.failures[signal] > 0:
            state.failures[signal] -= 1
            raise NvmlCallError(f"gpu {index}: Timeout ({signal})")
        return state.gpu

    @staticmethod
    def _mig(g: FakeGpu, gi_id: int) -> FakeMig:
        for m in g.mig:
            if m.gi_id == gi_id:
                return m
        raise NvmlCallError(f"no MIG instance with GPU_I_ID {gi_id}")

    def _advance(self, key: tuple[int, int | None]) -> _Counters:
        """Integrate the current rates of ``key`` (a GPU or one MIG instance) up to now."""
        now = self._clock()
        c = self._gpm.get(key)
        if c is None:
            c = self._gpm[key] = _Counters(t=now)
            return c
        dt = now - c.t
        g = self._states[key[0]].gpu
        src: Any = g if key[1] is None else self._mig(g, key[1])
        c.sm += src.sm_activity * dt
        c.dram += src.dram_bandwidth * dt
        if key[1] is None:
            c.rx += g.pcie_rx * dt
            c.tx += g.pcie_tx * dt
        c.t = now
        return c
