"""The GPU sidecar's metric and label names: the one place other code imports them from.

Two vocabularies. **llmload names** (the default) are in Prometheus base units (ratios
0..1, bytes, watts, hertz); the simulator (:mod:`llmload.sim.gpu`) publishes the same
names for its simulated GPU, and the run collector reads them. **dcgm-exporter names**
(``--dcgm-names``) are NVIDIA dcgm-exporter's field names in *its* units (``*_UTIL``
in percent 0..100, ``PROF_*`` ratios 0..1, framebuffer in MiB, clocks in MHz), so
existing "NVIDIA DCGM Exporter" dashboards work unchanged. Units and the dcgm
equivalents are from ``shared/research/gpu_and_server_metrics.md`` §2.1
(``NVIDIA/dcgm-exporter:etc/default-counters.csv``).

Labels are dcgm-exporter's label set (``internal/pkg/rendermetrics/render_metrics.go``
at d5e5f51, where ``Hostname`` became ``hostname``): ``gpu`` (NVML index), ``UUID``,
``pci_bus_id``, ``device`` (``nvidia<minor>``), ``modelName``, ``hostname``; rows of a
MIG instance add ``GPU_I_PROFILE`` (``3g.71gb``) and ``GPU_I_ID``, and keep the parent
GPU's ``gpu``/``UUID``/``modelName``, as dcgm-exporter does.

=================================================  =====  ===========================  ==========================
llmload name                                       unit   source                       ``--dcgm-names`` (unit)
=================================================  =====  ===========================  ==========================
llmload_gpu_utilization_ratio                      0..1   NVML util.gpu (temporal)     DCGM_FI_DEV_GPU_UTIL (%)
llmload_gpu_memory_bandwidth_utilization_ratio     0..1   GPM DRAM_BW_UTIL, label      DCGM_FI_PROF_DRAM_ACTIVE (0..1)
  ``{source="gpm"|"nvml_memory_busy"}``                   ``source``; else util.memory DCGM_FI_DEV_MEM_COPY_UTIL (%)
llmload_gpu_sm_activity_ratio                      0..1   GPM SM_UTIL (spatial)        DCGM_FI_PROF_SM_ACTIVE (0..1)
llmload_gpu_memory_used_bytes                      B      memory info v2 ``used``      DCGM_FI_DEV_FB_USED (MiB)
llmload_gpu_memory_total_bytes                     B      memory info ``total``        DCGM_FI_DEV_FB_TOTAL (MiB)
(free: dcgm names only)                            B      memory info ``free``         DCGM_FI_DEV_FB_FREE (MiB)
llmload_gpu_power_watts                            W      power usage (mW / 1000)      DCGM_FI_DEV_POWER_USAGE (W)
llmload_gpu_power_limit_watts                      W      enforced power limit         DCGM_FI_DEV_POWER_MGMT_LIMIT (W)
llmload_gpu_temperature_celsius                    °C     GPU core sensor              DCGM_FI_DEV_GPU_TEMP (°C)
llmload_gpu_sm_clock_hertz                         Hz     SM clock (MHz × 1e6)         DCGM_FI_DEV_SM_CLOCK (MHz)
llmload_gpu_pcie_rx_bytes_per_second               B/s    GPM PCIE_RX, else NVML       DCGM_FI_PROF_PCIE_RX_BYTES (B/s)
llmload_gpu_pcie_tx_bytes_per_second               B/s    GPM PCIE_TX, else NVML       DCGM_FI_PROF_PCIE_TX_BYTES (B/s)
llmload_gpu_process_memory_used_bytes{pid}        B      compute processes            (same name in both modes)
=================================================  =====  ===========================  ==========================

Health series, the same in both modes: ``llmload_gpu_up`` (1, or 0 once the GPU is
lost), ``llmload_gpu_signal_supported{signal}``, ``llmload_gpu_devices``,
``llmload_gpu_sidecar_up``, ``llmload_gpu_sidecar_info{version,backend,driver_version,names,reason}``,
``llmload_gpu_samples_total``, ``llmload_gpu_sample_timestamp_seconds`` (wall clock of
the last sample) and ``llmload_gpu_sample_duration_seconds``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BASE_LABELS",
    "DCGM",
    "DCGM_MEM_COPY_UTIL",
    "DEVICES",
    "LLMLOAD",
    "MEMORY_BANDWIDTH",
    "MEMORY_TOTAL",
    "MEMORY_USED",
    "MIG_LABELS",
    "PCIE_RX",
    "PCIE_TX",
    "POWER",
    "POWER_LIMIT",
    "PROCESS_MEMORY",
    "SAMPLES",
    "SAMPLE_DURATION",
    "SAMPLE_TIMESTAMP",
    "SIDECAR_INFO",
    "SIDECAR_UP",
    "SIGNALS",
    "SIGNAL_SUPPORTED",
    "SM_ACTIVITY",
    "SM_CLOCK",
    "SOURCE_GPM",
    "SOURCE_MEMORY_BUSY",
    "TEMPERATURE",
    "UP",
    "UTILIZATION",
    "Export",
]

UTILIZATION = "llmload_gpu_utilization_ratio"
MEMORY_BANDWIDTH = "llmload_gpu_memory_bandwidth_utilization_ratio"
SM_ACTIVITY = "llmload_gpu_sm_activity_ratio"
MEMORY_USED = "llmload_gpu_memory_used_bytes"
MEMORY_TOTAL = "llmload_gpu_memory_total_bytes"
POWER = "llmload_gpu_power_watts"
POWER_LIMIT = "llmload_gpu_power_limit_watts"
TEMPERATURE = "llmload_gpu_temperature_celsius"
SM_CLOCK = "llmload_gpu_sm_clock_hertz"
PCIE_RX = "llmload_gpu_pcie_rx_bytes_per_second"
PCIE_TX = "llmload_gpu_pcie_tx_bytes_per_second"
PROCESS_MEMORY = "llmload_gpu_process_memory_used_bytes"

UP = "llmload_gpu_up"
SIGNAL_SUPPORTED = "llmload_gpu_signal_supported"
DEVICES = "llmload_gpu_devices"
SIDECAR_UP = "llmload_gpu_sidecar_up"
SIDECAR_INFO = "llmload_gpu_sidecar"  # an info metric: exposed as llmload_gpu_sidecar_info
SAMPLES = "llmload_gpu_samples"  # a counter: exposed as llmload_gpu_samples_total
SAMPLE_TIMESTAMP = "llmload_gpu_sample_timestamp_seconds"
SAMPLE_DURATION = "llmload_gpu_sample_duration_seconds"

#: ``source`` label values of :data:`MEMORY_BANDWIDTH`.
SOURCE_GPM = "gpm"
SOURCE_MEMORY_BUSY = "nvml_memory_busy"

#: Labels of every per-GPU row (dcgm-exporter's set), in this order.
BASE_LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "hostname")
#: Added to the rows of a MIG instance.
MIG_LABELS = ("GPU_I_PROFILE", "GPU_I_ID")

#: Signals probed once per GPU at start (``llmload_gpu_signal_supported{signal}``).
SIGNALS = (
    "utilization",  # util.gpu and util.memory (one NVML call); never on MIG-enabled GPUs
    "memory",
    "power",
    "power_limit",
    "temperature",
    "sm_clock",
    "pcie",
    "processes",
    "gpm",  # SM activity and DRAM bandwidth (and PCIe) from GPM: Hopper and newer
)


@dataclass(frozen=True, slots=True)
class Export:
    """How one sampled value (base unit) is exported: ``name``, help text, ``value × scale``.

    ``whole``: ``"round"`` or ``"floor"`` to export whole numbers, as dcgm-exporter does
    (percent, MHz, °C rounded; MiB rounded down); ``""`` keeps the float.
    """

    name: str
    help: str
    scale: float = 1.0
    whole: str = ""

    def value(self, v: float) -> float:
        x = v * self.scale
        if self.whole == "round":
            return float(round(x))
        if self.whole == "floor":
            return float(int(x + 1e-9))
        return x


_MIB = 1.0 / (1 << 20)

#: Sampled value key → llmload export. ``memory_busy`` is exported as MEMORY_BANDWIDTH
#: ``{source="nvml_memory_busy"}`` only on GPUs without GPM; ``memory_free`` is not exported.
LLMLOAD: dict[str, Export] = {
    "utilization": Export(
        UTILIZATION, "Fraction of the sample period in which at least one kernel ran (NVML util.gpu)"
    ),
    "dram_bandwidth": Export(
        MEMORY_BANDWIDTH,
        "Memory bandwidth utilization: GPM DRAM bandwidth / peak (source=gpm) or NVML memory-busy time",
    ),
    "memory_busy": Export(
        MEMORY_BANDWIDTH,
        "Memory bandwidth utilization: GPM DRAM bandwidth / peak (source=gpm) or NVML memory-busy time",
    ),
    "sm_activity": Export(SM_ACTIVITY, "Fraction of SMs busy over the sample period (GPM SM_UTIL)"),
    "memory_used": Export(MEMORY_USED, "Device memory used in bytes (NVML memory info v2)"),
    "memory_total": Export(MEMORY_TOTAL, "Device memory in bytes"),
    "power": Export(POWER, "Power draw in watts (NVML: 1 s average on Ampere and newer)"),
    "power_limit": Export(POWER_LIMIT, "Enforced power limit in watts"),
    "temperature": Export(TEMPERATURE, "GPU core temperature in degrees Celsius"),
    "sm_clock": Export(SM_CLOCK, "SM clock in hertz (below max under load: throttling)"),
    "pcie_rx": Export(PCIE_RX, "PCIe receive throughput in bytes per second"),
    "pcie_tx": Export(PCIE_TX, "PCIe transmit throughput in bytes per second"),
}

DCGM_MEM_COPY_UTIL = "DCGM_FI_DEV_MEM_COPY_UTIL"

#: Sampled value key → dcgm-exporter export, in dcgm-exporter's units.
DCGM: dict[str, Export] = {
    "utilization": Export("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", 100.0, "round"),
    "memory_busy": Export(DCGM_MEM_COPY_UTIL, "Memory utilization (in %).", 100.0, "round"),
    "dram_bandwidth": Export(
        "DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving data."
    ),
    "sm_activity": Export("DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned."),
    "memory_used": Export("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", _MIB, "floor"),
    "memory_free": Export("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", _MIB, "floor"),
    "memory_total": Export("DCGM_FI_DEV_FB_TOTAL", "Framebuffer memory total (in MiB).", _MIB, "floor"),
    "power": Export("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
    "power_limit": Export("DCGM_FI_DEV_POWER_MGMT_LIMIT", "Power management limit (in W)."),
    "temperature": Export("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", 1.0, "round"),
    "sm_clock": Export("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", 1e-6, "round"),
    "pcie_rx": Export(
        "DCGM_FI_PROF_PCIE_RX_BYTES", "The rate of data received over the PCIe bus, in bytes per second."
    ),
    "pcie_tx": Export(
        "DCGM_FI_PROF_PCIE_TX_BYTES", "The rate of data transmitted over the PCIe bus, in bytes per second."
    ),
}
