"""Every exported series on the fake backend, read back from the exposition text; GPM pairs; dcgm names."""

from __future__ import annotations

import pytest

from llmload.gpu import h200, names
from llmload.gpu.fake import H200_MEMORY_TOTAL
from tests.helpers.gpu import fake_rig, samples

MIB = 1 << 20


def labels_of(scraped, name):
    return [lab for lab, _ in scraped[name]]


def test_every_llmload_metric_of_an_h200_with_its_unit_and_labels():
    r = fake_rig([h200(0)])
    s = r.scrape()
    one = lambda name, **lab: samples(s, name, gpu="0", **lab)  # noqa: E731
    assert one(names.UTILIZATION) == [1.0]
    assert one(names.MEMORY_BANDWIDTH, source="gpm") == [pytest.approx(0.31)]
    assert one(names.SM_ACTIVITY) == [pytest.approx(0.92)]
    assert one(names.MEMORY_USED) == [33_934_016_512]
    assert one(names.MEMORY_TOTAL) == [H200_MEMORY_TOTAL]
    assert one(names.POWER) == [627.4]
    assert one(names.POWER_LIMIT) == [700.0]
    assert one(names.TEMPERATURE) == [52.0]
    assert one(names.SM_CLOCK) == [1.98e9]
    assert one(names.PCIE_RX) == [pytest.approx(1.2e9)]
    assert one(names.PCIE_TX) == [pytest.approx(0.3e9)]
    assert sorted(one(names.PROCESS_MEMORY)) == [1_616_904_192, 2_690_646_016, 29_605_494_784]
    assert {lab["pid"] for lab in labels_of(s, names.PROCESS_MEMORY)} == {"10291", "10293", "10309"}
    assert one(names.UP) == [1.0]
    # dcgm-exporter's label set on every per-GPU series; no MIG labels on a whole GPU
    base = {
        "gpu": "0",
        "UUID": r.inventory.gpus[0].labels["UUID"],
        "pci_bus_id": "00000000:83:00.0",
        "device": "nvidia0",
        "modelName": "NVIDIA H200",
        "hostname": "gpuhost",
    }
    assert base["UUID"].startswith("GPU-")
    for export in names.LLMLOAD.values():
        for lab in labels_of(s, export.name):
            assert {k: lab[k] for k in base} == base
            assert set(lab) - set(base) <= {"source"}


def test_every_llmload_name_in_the_table_is_exported_by_a_full_featured_gpu():
    s = fake_rig([h200(0), h200(1, gpm=False)]).scrape()
    for export in names.LLMLOAD.values():
        assert export.name in s, export.name
    for name in (names.PROCESS_MEMORY, names.UP, names.SIGNAL_SUPPORTED, names.DEVICES, names.SIDECAR_UP):
        assert name in s, name
    assert f"{names.SIDECAR_INFO}_info" in s
    assert f"{names.SAMPLES}_total" in s
    assert names.SAMPLE_TIMESTAMP in s and names.SAMPLE_DURATION in s


def test_without_gpm_bandwidth_is_the_memory_busy_ratio_labelled_as_such_and_sm_activity_is_absent():
    r = fake_rig([h200(0, gpm=False)])
    s = r.scrape()
    assert samples(s, names.MEMORY_BANDWIDTH) == [0.07]
    assert samples(s, names.MEMORY_BANDWIDTH, source="nvml_memory_busy") == [0.07]
    assert names.SM_ACTIVITY not in s  # GPM only: left out, not 0
    assert samples(s, names.SIGNAL_SUPPORTED, signal="gpm") == [0.0]
    # PCIe then comes from nvmlDeviceGetPcieThroughput
    assert samples(s, names.PCIE_RX) == [1.2e9]
    assert r.backend.calls["pcie"] >= 2


def test_with_gpm_pcie_comes_from_gpm_and_the_blocking_nvml_call_is_not_made():
    r = fake_rig([h200(0)], samples=3)
    assert r.backend.calls["pcie"] == 0
    assert samples(r.scrape(), names.PCIE_TX) == [pytest.approx(0.3e9)]


def test_gpm_ratios_come_from_two_consecutive_samples():
    r = fake_rig([h200(0, sm_activity=0.2, dram_bandwidth=0.1)], samples=1)
    assert names.SM_ACTIVITY not in r.scrape()  # one sample: nothing to compare yet
    r.tick(1.0)
    assert samples(r.scrape(), names.SM_ACTIVITY) == [pytest.approx(0.2)]
    # the load changes half-way through the next window: the ratio is the window's average
    r.clock.advance(0.5)
    r.backend.set(0, sm_activity=0.8, dram_bandwidth=0.5)
    r.tick(0.5)
    s = r.scrape()
    assert samples(s, names.SM_ACTIVITY) == [pytest.approx(0.5)]
    assert samples(s, names.MEMORY_BANDWIDTH, source="gpm") == [pytest.approx(0.3)]
    r.tick(1.0)
    assert samples(r.scrape(), names.SM_ACTIVITY) == [pytest.approx(0.8)]


def test_gpm_window_guards_too_short_keeps_the_last_ratios_long_gap_reprimes():
    r = fake_rig([h200(0, sm_activity=0.4)])
    r.backend.set(0, sm_activity=1.0)
    r.tick(0.05)  # under 0.1 s: not a window, the last ratios stay
    assert samples(r.scrape(), names.SM_ACTIVITY) == [pytest.approx(0.4)]
    r.tick(30.0)  # a long gap (a stalled sampler): start a new pair, no stale average
    assert names.SM_ACTIVITY not in r.scrape()
    r.tick(1.0)
    assert samples(r.scrape(), names.SM_ACTIVITY) == [pytest.approx(1.0)]
    # samples are handed back: never more than one held per GPU
    assert r.backend.calls["gpm_sample"] - r.backend.calls["gpm_release"] == 1


def test_values_follow_the_gpu_from_sample_to_sample():
    r = fake_rig([h200(0)])
    r.backend.set(0, utilization=0.25, power_w=180.5, memory_used=1 << 30, temperature_c=41.0)
    r.tick()
    s = r.scrape()
    assert samples(s, names.UTILIZATION) == [0.25]
    assert samples(s, names.POWER) == [180.5]
    assert samples(s, names.MEMORY_USED) == [1 << 30]
    assert samples(s, names.TEMPERATURE) == [41.0]


def test_processes_whose_memory_the_driver_cannot_tell_are_left_out():
    from llmload.gpu import ProcessMemory

    r = fake_rig([h200(0, processes=(ProcessMemory(1, None), ProcessMemory(2, 5 << 20)))])
    s = r.scrape()
    assert [(lab["pid"], v) for lab, v in s[names.PROCESS_MEMORY]] == [("2", 5 << 20)]


def test_dcgm_names_use_dcgm_exporters_units_and_the_same_labels():
    r = fake_rig([h200(0)], dcgm_names=True)
    s = r.scrape()
    assert samples(s, "DCGM_FI_DEV_GPU_UTIL") == [100.0]  # percent
    assert samples(s, "DCGM_FI_DEV_MEM_COPY_UTIL") == [7.0]  # percent
    assert samples(s, "DCGM_FI_PROF_DRAM_ACTIVE") == [pytest.approx(0.31)]  # ratio
    assert samples(s, "DCGM_FI_PROF_SM_ACTIVE") == [pytest.approx(0.92)]  # ratio
    assert samples(s, "DCGM_FI_DEV_FB_USED") == [33_934_016_512 // MIB]  # MiB
    assert samples(s, "DCGM_FI_DEV_FB_FREE") == [116_178_026_496 // MIB]
    assert samples(s, "DCGM_FI_DEV_FB_TOTAL") == [H200_MEMORY_TOTAL // MIB]
    assert samples(s, "DCGM_FI_DEV_POWER_USAGE") == [627.4]  # W
    assert samples(s, "DCGM_FI_DEV_POWER_MGMT_LIMIT") == [700.0]
    assert samples(s, "DCGM_FI_DEV_GPU_TEMP") == [52.0]
    assert samples(s, "DCGM_FI_DEV_SM_CLOCK") == [1980.0]  # MHz
    assert samples(s, "DCGM_FI_PROF_PCIE_RX_BYTES") == [pytest.approx(1.2e9)]  # bytes/s
    assert samples(s, "DCGM_FI_PROF_PCIE_TX_BYTES") == [pytest.approx(0.3e9)]
    for export in names.DCGM.values():
        assert export.name in s, export.name
        assert {lab["modelName"] for lab in labels_of(s, export.name)} == {"NVIDIA H200"}
        assert {lab["gpu"] for lab in labels_of(s, export.name)} == {"0"}
    # no llmload_gpu_* signal names; the sidecar's own health series keep theirs
    for export in names.LLMLOAD.values():
        assert export.name not in s
    assert samples(s, names.UP) == [1.0]
    assert names.PROCESS_MEMORY in s
    assert samples(s, "llmload_gpu_sidecar_info", names="dcgm") == [1.0]


def test_health_series_count_samples_and_describe_the_sidecar():
    r = fake_rig(2, samples=3)
    s = r.scrape()
    assert samples(s, names.DEVICES) == [2.0]
    assert samples(s, names.SIDECAR_UP) == [1.0]
    assert samples(s, "llmload_gpu_samples_total") == [3.0]
    assert samples(s, names.SAMPLE_TIMESTAMP) == [1.7e9]
    assert samples(s, "llmload_gpu_sidecar_info", backend="fake", driver_version="590.48.01", reason="") == [1.0]
    assert len(samples(s, names.SIGNAL_SUPPORTED)) == 2 * len(names.SIGNALS)
