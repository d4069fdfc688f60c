"""Probe once at start: which GPUs, which MIG instances, which signals each one supports.

:func:`probe` calls every signal once per GPU. A signal that answers
:class:`~llmload.gpu.backend.Unsupported` is left out for the whole run (never exported
as 0) and listed once in the log; GPUs with the same missing set share one log line.
The result, an :class:`Inventory`, also fixes the labels of every row and where two
signals come from:

* memory bandwidth: GPM ``DRAM_BW_UTIL`` where GPM works (``source="gpm"``), else NVML's
  memory-busy time (``source="nvml_memory_busy"``); MIG instances: GPM only;
* PCIe: GPM where GPM works on the whole GPU, else ``nvmlDeviceGetPcieThroughput``.

A GPU that is lost during the probe is kept in the inventory, marked lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from llmload.gpu import names
from llmload.gpu.backend import DeviceInfo, GpuBackend, GpuLost, MigInstance, NvmlCallError, Unsupported

__all__ = ["GpuPlan", "Inventory", "MigPlan", "probe"]

log = logging.getLogger("llmload.gpu")


@dataclass(frozen=True, slots=True)
class MigPlan:
    instance: MigInstance
    labels: dict[str, str]


@dataclass(frozen=True, slots=True)
class GpuPlan:
    """One GPU as probed: its labels, its supported signals and its sources."""

    index: int
    labels: dict[str, str]
    info: DeviceInfo | None
    supported: frozenset[str]
    mig: tuple[MigPlan, ...] = ()
    bandwidth_source: str | None = None  # names.SOURCE_GPM | names.SOURCE_MEMORY_BUSY | None
    pcie_source: str | None = None  # "gpm" | "nvml" | None
    lost: bool = False

    @property
    def gpm_whole_gpu(self) -> bool:
        return "gpm" in self.supported and not self.mig


@dataclass(frozen=True, slots=True)
class Inventory:
    driver_version: str
    hostname: str
    gpus: tuple[GpuPlan, ...]


def gpu_labels(info: DeviceInfo, hostname: str) -> dict[str, str]:
    """dcgm-exporter's label set of one GPU (see :mod:`llmload.gpu.names`)."""
    minor = info.index if info.minor is None else info.minor
    values = (str(info.index), info.uuid, info.pci_bus_id, f"nvidia{minor}", info.name, hostname)
    return dict(zip(names.BASE_LABELS, values, strict=True))


def probe(backend: GpuBackend, hostname: str) -> Inventory:
    """Probe every GPU of an opened ``backend`` once (logs what is left out)."""
    try:
        driver = backend.driver_version()
    except (Unsupported, NvmlCallError):
        driver = ""
    plans = tuple(_probe_gpu(backend, i, hostname) for i in range(backend.device_count()))
    inv = Inventory(driver_version=driver, hostname=hostname, gpus=plans)
    _log_inventory(inv)
    return inv


def _probe_gpu(backend: GpuBackend, index: int, hostname: str) -> GpuPlan:
    try:
        info = backend.device(index)
    except (GpuLost, NvmlCallError) as e:
        log.error("gpu %d: cannot be read at start (%s); exported as llmload_gpu_up 0", index, e)
        return GpuPlan(index, {"gpu": str(index), "hostname": hostname}, None, frozenset(), lost=True)
    labels = gpu_labels(info, hostname)
    try:
        mig = tuple(
            MigPlan(m, {**labels, "GPU_I_PROFILE": m.profile, "GPU_I_ID": str(m.gi_id)})
            for m in _try(lambda: backend.mig_instances(index), ())
        )
        supported = _probe_signals(backend, index, mig)
    except GpuLost as e:
        log.error("gpu %d (%s): lost during the probe (%s); exported as llmload_gpu_up 0", index, info.uuid, e)
        return GpuPlan(index, labels, info, frozenset(), lost=True)
    if "gpm" in supported:
        bandwidth = names.SOURCE_GPM
    elif "utilization" in supported and not mig:
        bandwidth = names.SOURCE_MEMORY_BUSY
    else:
        bandwidth = None
    pcie = ("gpm" if "gpm" in supported and not mig else "nvml") if "pcie" in supported else None
    return GpuPlan(index, labels, info, supported, mig, bandwidth, pcie)


def _probe_signals(backend: GpuBackend, index: int, mig: tuple[MigPlan, ...]) -> frozenset[str]:
    first_gi = mig[0].instance.gi_id if mig else None
    probes: dict[str, Callable[[], Any]] = {
        "utilization": lambda: backend.utilization(index),
        "memory": lambda: backend.memory(index, first_gi),
        "power": lambda: backend.power_w(index),
        "power_limit": lambda: backend.power_limit_w(index),
        "temperature": lambda: backend.temperature_c(index),
        "sm_clock": lambda: backend.sm_clock_hz(index),
        "processes": lambda: backend.processes(index),
        "gpm": lambda: _probe_gpm(backend, index, first_gi),
    }
    supported = {signal for signal, call in probes.items() if _works(index, signal, call)}
    # PCIe: from GPM when GPM works on the whole GPU (NVML's call blocks 2 × 20 ms per GPU)
    if ("gpm" in supported and not mig) or _works(index, "pcie", lambda: backend.pcie(index)):
        supported.add("pcie")
    return frozenset(supported)


def _probe_gpm(backend: GpuBackend, index: int, gi_id: int | None) -> None:
    if not backend.gpm_supported(index):
        raise Unsupported(f"gpu {index}: GPM not supported (Hopper and newer)")
    backend.gpm_release(backend.gpm_sample(index, gi_id))


def _works(index: int, signal: str, call: Callable[[], Any]) -> bool:
    try:
        call()
    except Unsupported:
        return False
    except NvmlCallError as e:  # transient: keep the signal, the sampler retries every tick
        log.warning("gpu %d: %s failed at start (%s); will retry", index, signal, e)
    return True


def _try(call: Callable[[], Any], default: Any) -> Any:
    try:
        return call()
    except (Unsupported, NvmlCallError):
        return default


def _ranges(indexes: list[int]) -> str:
    """``[0, 1, 2, 5]`` → ``"0-2,5"``."""
    out: list[str] = []
    for i in indexes:
        if out and out[-1].split("-")[-1] == str(i - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{i}"
        else:
            out.append(str(i))
    return ",".join(out)


def _log_inventory(inv: Inventory) -> None:
    ok = [p for p in inv.gpus if not p.lost]
    models = sorted({p.labels["modelName"] for p in ok})
    log.info(
        "found %d GPU(s) on %s, driver %s: %s",
        len(inv.gpus),
        inv.hostname,
        inv.driver_version or "?",
        ", ".join(models),
    )
    missing: dict[tuple[str, ...], list[int]] = {}
    for p in ok:
        left_out = tuple(s for s in names.SIGNALS if s not in p.supported)
        if left_out:
            missing.setdefault(left_out, []).append(p.index)
    for left_out, indexes in missing.items():
        log.info("gpu %s: not supported, left out: %s", _ranges(indexes), ", ".join(left_out))
    for p in ok:
        if p.mig:
            parts = ", ".join(f"GPU_I_ID {m.instance.gi_id} ({m.instance.profile})" for m in p.mig)
            per_instance = "memory, SM activity and DRAM bandwidth (GPM)" if "gpm" in p.supported else "memory only"
            log.info("gpu %d: MIG on, instances %s: per instance %s", p.index, parts, per_instance)
        if p.bandwidth_source == names.SOURCE_MEMORY_BUSY:
            log.info(
                "gpu %d: no GPM; memory bandwidth is NVML's memory-busy time (source=%s), not bytes moved",
                p.index,
                names.SOURCE_MEMORY_BUSY,
            )
