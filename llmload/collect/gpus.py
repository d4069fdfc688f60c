"""GPU exporters' names, mapped onto the common GPU signals in base units, per GPU.

Three vocabularies are read, each recognised by its names:

* ``llmload`` — the GPU sidecar (:mod:`llmload.gpu`) and the simulator: names and units
  from :mod:`llmload.gpu.names` (ratios 0..1, bytes, watts, hertz);
  ``llmload_gpu_memory_bandwidth_utilization_ratio{source="nvml_memory_busy"}`` is
  NVML's memory-busy time, marked ``coarse``; ``llmload_gpu_up 0`` marks a lost GPU;
* ``dcgm`` — NVIDIA dcgm-exporter, or the sidecar's ``--dcgm-names``: ``DCGM_FI_DEV_*_UTIL``
  in percent, framebuffer in MiB, clocks in MHz, ``DCGM_FI_PROF_*`` ratios; bandwidth from
  ``DCGM_FI_PROF_DRAM_ACTIVE``, else ``DCGM_FI_DEV_MEM_COPY_UTIL`` (coarse); memory total
  from ``FB_TOTAL`` or ``FB_USED + FB_FREE + FB_RESERVED``;
* ``nvidia_smi`` — utkuozdemir/nvidia_gpu_exporter (``nvidia_smi_*``, base units already).

A GPU is keyed by its ``UUID`` (``uuid``), plus ``/<GPU_I_ID>`` for a MIG instance, else by
host and index. Device labels (index, model, host, MIG profile) ride along for the
summary. MIG: the GPU's row carries power, temperature and clocks, the instances'
rows memory and activity; :func:`combine` adds memory over instances without counting a
GPU twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmload.collect.exposition import Samples
from llmload.collect.signal_table import gpu_signal
from llmload.gpu import names as gpu_names

__all__ = [
    "GPU_NAMES",
    "GPU_PREFIXES",
    "VOCABULARIES",
    "GpuReading",
    "Vocabulary",
    "combine",
    "metric_names",
    "read_gpus",
]

_MIB = float(1 << 20)


@dataclass(frozen=True, slots=True)
class Source:
    """One exported name of a signal: ``base value = value x scale``; ``coarse`` marks a stand-in."""

    name: str
    scale: float = 1.0
    coarse: bool = False


@dataclass(frozen=True, slots=True)
class Vocabulary:
    name: str
    prefix: str
    signals: dict[str, tuple[Source, ...]]
    extra: dict[str, Source] = field(default_factory=dict)  # read only to derive a signal


def _dcgm(key: str, coarse: bool = False) -> Source:
    export = gpu_names.DCGM[key]
    return Source(export.name, 1.0 / export.scale, coarse)


LLMLOAD = Vocabulary(
    "llmload",
    "llmload_gpu_",
    {
        "utilization": (Source(gpu_names.UTILIZATION),),
        "memory_bandwidth_utilization": (Source(gpu_names.MEMORY_BANDWIDTH),),
        "sm_activity": (Source(gpu_names.SM_ACTIVITY),),
        "memory_used_bytes": (Source(gpu_names.MEMORY_USED),),
        "memory_total_bytes": (Source(gpu_names.MEMORY_TOTAL),),
        "power_watts": (Source(gpu_names.POWER),),
        "temperature_celsius": (Source(gpu_names.TEMPERATURE),),
        "sm_clock_hertz": (Source(gpu_names.SM_CLOCK),),
    },
    {"up": Source(gpu_names.UP)},
)

DCGM = Vocabulary(
    "dcgm",
    "DCGM_FI_",
    {
        "utilization": (_dcgm("utilization"),),
        "memory_bandwidth_utilization": (_dcgm("dram_bandwidth"), _dcgm("memory_busy", coarse=True)),
        "sm_activity": (_dcgm("sm_activity"),),
        "memory_used_bytes": (_dcgm("memory_used"),),
        "memory_total_bytes": (_dcgm("memory_total"),),
        "power_watts": (_dcgm("power"),),
        "temperature_celsius": (_dcgm("temperature"),),
        "sm_clock_hertz": (_dcgm("sm_clock"),),
    },
    {"memory_free": _dcgm("memory_free"), "memory_reserved": Source("DCGM_FI_DEV_FB_RESERVED", _MIB)},
)

NVIDIA_SMI = Vocabulary(
    "nvidia_smi",
    "nvidia_smi_",
    {
        "utilization": (Source("nvidia_smi_utilization_gpu_ratio"),),
        "memory_bandwidth_utilization": (Source("nvidia_smi_utilization_memory_ratio", coarse=True),),
        "memory_used_bytes": (Source("nvidia_smi_memory_used_bytes"),),
        "memory_total_bytes": (Source("nvidia_smi_memory_total_bytes"),),
        "power_watts": (Source("nvidia_smi_power_draw_watts"),),
        "temperature_celsius": (Source("nvidia_smi_temperature_gpu"),),
        "sm_clock_hertz": (Source("nvidia_smi_clocks_current_sm_clock_hz"),),
    },
)

VOCABULARIES: tuple[Vocabulary, ...] = (LLMLOAD, DCGM, NVIDIA_SMI)
GPU_PREFIXES: tuple[str, ...] = tuple(v.prefix for v in VOCABULARIES)


def metric_names() -> list[str]:
    """Every GPU sample name read (for the line filter and a Prometheus query)."""
    names = [s.name for v in VOCABULARIES for sources in v.signals.values() for s in sources]
    names += [s.name for v in VOCABULARIES for s in v.extra.values()]
    return list(dict.fromkeys(names))


GPU_NAMES: frozenset[str] = frozenset(metric_names())


@dataclass(slots=True)
class GpuReading:
    """One GPU (or MIG instance) at one instant: ``values`` in base units, ``info`` its labels."""

    key: str
    vocabulary: str
    info: dict[str, str] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    coarse: set[str] = field(default_factory=set)
    lost: bool = False


def _device(labels: dict[str, str]) -> tuple[str, dict[str, str]]:
    uuid = labels.get("UUID") or labels.get("uuid") or ""
    host = labels.get("hostname") or labels.get("Hostname") or labels.get("instance") or ""
    index = labels.get("gpu", "")
    key = uuid or f"{host}/gpu{index}"
    gi = labels.get("GPU_I_ID")
    if gi:
        key += f"/mig{gi}"
    info = {"gpu": index, "uuid": uuid, "model": labels.get("modelName", ""), "hostname": host}
    if gi:
        info.update(mig_instance=gi, mig_profile=labels.get("GPU_I_PROFILE", ""))
    return key, {k: v for k, v in info.items() if v}


def read_gpus(samples: Samples) -> dict[str, GpuReading]:
    """Every GPU found in ``samples``, by key (several vocabularies may be present at once)."""
    out: dict[str, GpuReading] = {}
    for vocab in VOCABULARIES:
        if not samples.count_prefix(vocab.prefix):
            continue
        _read_signals(samples, vocab, out)
        if "up" in vocab.extra:
            _read_up(samples, vocab, out)
        if "memory_free" in vocab.extra:
            _read_memory_total(samples, vocab, out)
    return out


def _reading(out: dict[str, GpuReading], labels: dict[str, str], vocab: Vocabulary) -> GpuReading:
    """The reading of the GPU ``labels`` name (added to ``out`` the first time it is seen)."""
    key, info = _device(labels)
    r = out.get(key)
    if r is None:
        r = out[key] = GpuReading(key, vocab.name, info)
    return r


def _read_signals(samples: Samples, vocab: Vocabulary, out: dict[str, GpuReading]) -> None:
    """Every signal of ``vocab``, from its preferred source first: a GPU keeps the first value found."""
    for signal, sources in vocab.signals.items():
        for source in sources:
            for labels, value in samples.get(source.name):
                r = _reading(out, labels, vocab)
                if signal in r.values:
                    continue
                r.values[signal] = value * source.scale
                if source.coarse or labels.get("source") == gpu_names.SOURCE_MEMORY_BUSY:
                    r.coarse.add(signal)


def _read_up(samples: Samples, vocab: Vocabulary, out: dict[str, GpuReading]) -> None:
    """A GPU its exporter reports down (``up`` 0) is marked lost."""
    for labels, up in samples.get(vocab.extra["up"].name):
        if up == 0:
            _reading(out, labels, vocab).lost = True


def _read_memory_total(samples: Samples, vocab: Vocabulary, out: dict[str, GpuReading]) -> None:
    """Total memory where the vocabulary has none: used + (free + reserved)."""
    reserved = {_device(labels)[0]: v for labels, v in samples.get(vocab.extra["memory_reserved"].name)}
    for labels, free in samples.get(vocab.extra["memory_free"].name):
        r = out.get(_device(labels)[0])
        if r is not None and "memory_total_bytes" not in r.values and "memory_used_bytes" in r.values:
            scale = vocab.extra["memory_free"].scale
            r.values["memory_total_bytes"] = r.values["memory_used_bytes"] + (free + reserved.get(r.key, 0.0)) * scale


def combine(values: dict[str, float], signal: str) -> float | None:
    """All GPUs' ``signal`` at one instant (GPU key -> value), by the signal's ``agg``.

    A MIG instance (key ``<uuid>/mig<id>``) counts only where its GPU's own row lacks the
    signal, so that nothing is counted twice.
    """
    kept = [v for k, v in values.items() if "/mig" not in k or k.rsplit("/mig", 1)[0] not in values]
    if not kept:
        return None
    agg = gpu_signal(signal).agg
    if agg == "sum":
        return sum(kept)
    if agg == "max":
        return max(kept)
    return sum(kept) / len(kept)
