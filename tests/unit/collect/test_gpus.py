"""GPU exporters' recorded /metrics -> GPU signals in base units, per GPU; MIG; lost GPUs; combining."""

from __future__ import annotations

import pytest

from llmload.collect.exposition import parse_exposition
from llmload.collect.gpus import combine, metric_names, read_gpus
from llmload.gpu import names as gpu_names
from tests.helpers.collect import samples

H200_TOTAL = 150_754_820_096
MIB = 1 << 20


def test_llmload_sidecar_names():
    gpus = read_gpus(samples("llmload-gpu-sidecar_fake-h200x2.txt"))
    assert len(gpus) == 2
    g = gpus["GPU-3d38d1b3-3e7a-5549-9b80-e220b83ad3cb"]
    assert g.vocabulary == "llmload"
    assert g.info == {"gpu": "0", "uuid": g.key, "model": "NVIDIA H200", "hostname": "gpu-node-1"}
    assert g.values == {
        "utilization": 1.0,
        "memory_bandwidth_utilization": pytest.approx(0.31),
        "sm_activity": pytest.approx(0.92),
        "memory_used_bytes": 33_934_016_512,
        "memory_total_bytes": H200_TOTAL,
        "power_watts": 627.4,
        "temperature_celsius": 52.0,
        "sm_clock_hertz": 1.98e9,
    }
    assert not g.coarse and not g.lost


def test_sidecar_dcgm_names_give_the_same_values_in_base_units():
    by_llmload = read_gpus(samples("llmload-gpu-sidecar_fake-h200x2.txt"))
    by_dcgm = read_gpus(samples("llmload-gpu-sidecar_fake-h200x2_dcgm-names.txt"))
    assert by_llmload.keys() == by_dcgm.keys()
    for key, a in by_llmload.items():
        b = by_dcgm[key]
        assert b.vocabulary == "dcgm"
        for signal, value in a.values.items():
            # dcgm names are rounded as dcgm-exporter rounds them: percent, whole MiB
            assert b.values[signal] == pytest.approx(value, rel=1e-4, abs=MIB), signal


def test_dcgm_exporter_units_and_memory_total_from_used_free_reserved():
    gpus = read_gpus(samples("dcgm-exporter-4.1_h200x2_Hostname-label.txt"))
    g = gpus["GPU-5a1f7a0e-3b1e-6c0f-9a8d-0d1b2c3e4f50"]
    assert g.info["hostname"] == "gpu-node-7"  # the Hostname label of older releases
    assert g.values["utilization"] == pytest.approx(0.97)  # percent -> ratio
    assert g.values["memory_bandwidth_utilization"] == pytest.approx(0.692831)  # PROF_DRAM_ACTIVE, not MEM_COPY_UTIL
    assert g.values["sm_activity"] == pytest.approx(0.874411)
    assert g.values["memory_used_bytes"] == 128868 * MIB
    assert g.values["memory_total_bytes"] == (128868 + 14563 + 340) * MIB == H200_TOTAL
    assert g.values["power_watts"] == pytest.approx(612.345)
    assert g.values["sm_clock_hertz"] == 1.98e9
    assert not g.coarse


def test_dcgm_without_profiling_fields_falls_back_to_coarse_memory_busy():
    t = 'DCGM_FI_DEV_MEM_COPY_UTIL{gpu="0",UUID="GPU-x"} 41\nDCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-x"} 99\n'
    g = read_gpus(parse_exposition(t))["GPU-x"]
    assert g.values == {"utilization": pytest.approx(0.99), "memory_bandwidth_utilization": pytest.approx(0.41)}
    assert g.coarse == {"memory_bandwidth_utilization"}


def test_sidecar_memory_busy_source_is_marked_coarse():
    t = f'{gpu_names.MEMORY_BANDWIDTH}{{gpu="0",UUID="GPU-y",source="{gpu_names.SOURCE_MEMORY_BUSY}"}} 0.07\n'
    g = read_gpus(parse_exposition(t))["GPU-y"]
    assert g.values["memory_bandwidth_utilization"] == pytest.approx(0.07)
    assert g.coarse == {"memory_bandwidth_utilization"}


def test_nvidia_gpu_exporter_names():
    (g,) = read_gpus(samples("nvidia-gpu-exporter-1.3_h200_gpu-burn.txt")).values()
    assert g.vocabulary == "nvidia_smi"
    assert g.values["utilization"] == 1.0
    assert g.values["memory_total_bytes"] == H200_TOTAL
    assert g.coarse == {"memory_bandwidth_utilization"}  # utilization.memory is busy time


def test_mig_instances_are_devices_and_combine_counts_nothing_twice():
    for name, instances in (
        ("llmload-gpu-sidecar_fake-h200-mig.txt", 3),
        ("dcgm-exporter-4.1_h200-mig-2x3g.71gb_hostname-label.txt", 2),
    ):
        gpus = read_gpus(samples(name))
        migs = [g for g in gpus.values() if "/mig" in g.key]
        (parent,) = [g for g in gpus.values() if "/mig" not in g.key]
        assert len(migs) == instances, name
        assert all(m.info["mig_profile"] and m.info["uuid"] == parent.key for m in migs)
        assert "power_watts" in parent.values and "memory_used_bytes" not in parent.values
        used = combine({g.key: g.values["memory_used_bytes"] for g in migs}, "memory_used_bytes")
        assert used == sum(m.values["memory_used_bytes"] for m in migs)
        power = {g.key: g.values["power_watts"] for g in gpus.values() if "power_watts" in g.values}
        assert combine(power, "power_watts") == parent.values["power_watts"]


def test_combine_drops_instances_whose_gpu_has_the_signal_and_uses_each_signals_agg():
    values = {"GPU-a": 100.0, "GPU-a/mig1": 40.0, "GPU-b/mig2": 30.0}
    assert combine(values, "memory_used_bytes") == 130.0  # sum, GPU-a's instance left out
    assert combine({"a": 0.2, "b": 0.6}, "utilization") == pytest.approx(0.4)  # mean
    assert combine({"a": 50.0, "b": 70.0}, "temperature_celsius") == 70.0  # max
    assert combine({}, "utilization") is None


def test_a_lost_gpu_is_marked():
    t = f'{gpu_names.UP}{{gpu="0",UUID="GPU-a"}} 1\n{gpu_names.UP}{{gpu="1",UUID="GPU-b"}} 0\n{gpu_names.UTILIZATION}{{gpu="0",UUID="GPU-a"}} 0.5\n'
    gpus = read_gpus(parse_exposition(t))
    assert not gpus["GPU-a"].lost and gpus["GPU-b"].lost
    assert gpus["GPU-b"].values == {}


def test_simulator_gpu_and_engine_share_one_page():
    (g,) = read_gpus(samples("llmload-sim_healthy_8-users.txt")).values()
    assert g.info["model"] == "NVIDIA A10"
    assert 0.0 < g.values["utilization"] <= 1.0
    assert set(g.values) == {
        "utilization",
        "memory_bandwidth_utilization",
        "memory_used_bytes",
        "memory_total_bytes",
        "power_watts",
    }


def test_gpu_keys_without_uuid_use_host_and_index_and_engine_pages_have_no_gpu():
    t = 'nvidia_smi_utilization_gpu_ratio{instance="n1:9835",gpu="3"} 0.5\n'
    assert list(read_gpus(parse_exposition(t))) == ["n1:9835/gpu3"]
    assert read_gpus(samples("vllm-0.10-v1_llama-3.1-8b_t1.txt")) == {}
    assert "DCGM_FI_PROF_DRAM_ACTIVE" in metric_names() and gpu_names.UTILIZATION in metric_names()
