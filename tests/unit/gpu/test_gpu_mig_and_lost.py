"""A MIG layout (per-instance rows with dcgm-exporter's GPU_I_* labels) and a GPU lost mid-run."""

from __future__ import annotations

import logging
import time
import urllib.request

import pytest

from llmload.gpu import FakeNvml, Sidecar, SidecarConfig, h200, h200_mig, names
from llmload.gpu.fake import H200_MEMORY_TOTAL
from tests.helpers.clock import FakeClock
from tests.helpers.gpu import fake_rig, parse, rig, samples

LOGGER = "llmload.gpu"
INSTANCES = {"1": "3g.71gb", "5": "2g.35gb", "13": "1g.18gb"}


def test_mig_instances_have_their_own_memory_rows_labelled_like_dcgm_exporter():
    r = fake_rig([h200_mig(0)])
    s = r.scrape()
    used = {lab["GPU_I_ID"]: (lab["GPU_I_PROFILE"], v) for lab, v in s[names.MEMORY_USED]}
    assert used == {
        "1": ("3g.71gb", 14_183_038_976),
        "5": ("2g.35gb", 2_300_575_744),
        "13": ("1g.18gb", 1_226_833_920),
    }
    totals = {lab["GPU_I_ID"]: v for lab, v in s[names.MEMORY_TOTAL]}
    assert totals == {"1": H200_MEMORY_TOTAL // 2, "5": H200_MEMORY_TOTAL // 4, "13": H200_MEMORY_TOTAL // 8}
    # instance rows keep the parent's identity (gpu, UUID, modelName), as dcgm-exporter does
    parent = r.inventory.gpus[0].labels
    for lab, _ in s[names.MEMORY_USED]:
        assert {k: lab[k] for k in names.BASE_LABELS} == parent
    # the parent's aggregate memory is not exported beside them (sum by gpu stays right)
    assert all("GPU_I_ID" in lab for lab, _ in s[names.MEMORY_USED])


def test_mig_has_no_utilization_but_gpm_per_instance():
    r = fake_rig([h200_mig(0)])
    s = r.scrape()
    assert names.UTILIZATION not in s  # NVML: not supported with MIG on; left out, not 0
    assert samples(s, names.SIGNAL_SUPPORTED, signal="utilization") == [0.0]
    sm = {lab["GPU_I_ID"]: v for lab, v in s[names.SM_ACTIVITY]}
    assert sm == {"1": pytest.approx(0.95), "5": pytest.approx(0.10), "13": pytest.approx(0.05)}
    bw = {(lab["GPU_I_ID"], lab["source"]): v for lab, v in s[names.MEMORY_BANDWIDTH]}
    assert bw == {
        ("1", "gpm"): pytest.approx(0.40),
        ("5", "gpm"): pytest.approx(0.05),
        ("13", "gpm"): pytest.approx(0.02),
    }
    # whole-GPU signals stay on the GPU row, without instance labels
    assert [(lab.get("GPU_I_ID"), v) for lab, v in s[names.POWER]] == [(None, 295.01)]
    assert samples(s, names.TEMPERATURE) == [36.0]


def test_mig_without_gpm_exports_memory_per_instance_only():
    r = fake_rig([h200_mig(0, gpm=False)])
    s = r.scrape()
    assert len(s[names.MEMORY_USED]) == 3
    assert names.SM_ACTIVITY not in s
    assert names.MEMORY_BANDWIDTH not in s  # memory-busy time is not per instance


def test_mig_processes_carry_their_instance():
    s = fake_rig([h200_mig(0)]).scrape()
    procs = {lab["pid"]: (lab["GPU_I_ID"], lab["GPU_I_PROFILE"], v) for lab, v in s[names.PROCESS_MEMORY]}
    assert procs == {
        "12267": ("1", "3g.71gb", 14_183_038_976),
        "12249": ("5", "2g.35gb", 2_300_575_744),
        "12250": ("13", "1g.18gb", 1_226_833_920),
    }


def test_mig_in_dcgm_names():
    s = fake_rig([h200_mig(0), h200(1)], dcgm_names=True).scrape()
    fb = {(lab["gpu"], lab.get("GPU_I_ID")): v for lab, v in s["DCGM_FI_DEV_FB_USED"]}
    assert fb == {
        ("0", "1"): 14_183_038_976 // (1 << 20),
        ("0", "5"): 2_300_575_744 // (1 << 20),
        ("0", "13"): 1_226_833_920 // (1 << 20),
        ("1", None): 33_934_016_512 // (1 << 20),
    }
    assert {lab["gpu"] for lab, _ in s["DCGM_FI_DEV_GPU_UTIL"]} == {"1"}
    assert {lab.get("GPU_I_PROFILE") for lab, _ in s["DCGM_FI_PROF_DRAM_ACTIVE"]} == {*INSTANCES.values(), None}


def test_mig_layout_is_logged_once(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    r = fake_rig([h200_mig(0)], samples=3)
    r.tick()
    lines = [rec.getMessage() for rec in caplog.records if "MIG on" in rec.getMessage()]
    assert lines == [
        "gpu 0: MIG on, instances GPU_I_ID 1 (3g.71gb), GPU_I_ID 5 (2g.35gb), GPU_I_ID 13 (1g.18gb): "
        "per instance memory, SM activity and DRAM bandwidth (GPM)"
    ]


# -- a GPU lost mid-run -------------------------------------------------------------------------


def test_a_lost_gpu_is_marked_down_its_series_dropped_and_the_others_go_on(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    r = fake_rig([h200(0), h200(1), h200_mig(2)])
    r.backend.lose(1)
    for _ in range(3):
        r.tick()
    s = r.scrape()
    assert samples(s, names.UP, gpu="1") == [0.0]
    assert samples(s, names.UP, gpu="0") == [1.0]
    assert samples(s, names.UP, gpu="2") == [1.0]
    for export in names.LLMLOAD.values():
        assert samples(s, export.name, gpu="1") == [], export.name
    assert samples(s, names.PROCESS_MEMORY, gpu="1") == []
    assert samples(s, names.POWER, gpu="0") == [627.4]
    assert len(samples(s, names.MEMORY_USED, gpu="2")) == 3
    assert samples(s, names.DEVICES) == [3.0]
    assert samples(s, "llmload_gpu_samples_total") == [5.0]
    lost = [rec for rec in caplog.records if "lost" in rec.getMessage()]
    assert len(lost) == 1 and lost[0].levelno == logging.ERROR
    assert r.inventory.gpus[1].labels["UUID"] in lost[0].getMessage()


def test_a_lost_gpu_is_not_asked_again():
    r = fake_rig([h200(0), h200(1)])
    r.backend.lose(0)
    r.tick()
    before = r.backend.calls["power_w"]
    r.tick()
    assert r.backend.calls["power_w"] == before + 1  # only GPU 1


def test_a_gpu_lost_before_the_probe_is_exported_down():
    clock = FakeClock()
    fake = FakeNvml([h200(0), h200(1)], clock=clock)
    fake.lose(1)
    r = rig(fake, clock)
    s = r.scrape()
    assert samples(s, names.UP, gpu="1") == [0.0]
    assert samples(s, names.UP, gpu="0") == [1.0]
    assert samples(s, names.SIGNAL_SUPPORTED, gpu="1", signal="power") == [0.0]


def test_the_sidecar_keeps_serving_over_http_after_a_gpu_is_lost():
    fake = FakeNvml(2)
    sidecar = Sidecar(SidecarConfig(host="127.0.0.1", port=0, interval_s=0.1), backend=fake)
    sidecar.start()
    try:
        fake.lose(0)
        first = sidecar.sampler.snapshot.samples
        deadline = time.monotonic() + 10
        while sidecar.sampler.snapshot.samples < first + 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # the sidecar's own timer samples
        with urllib.request.urlopen(sidecar.url, timeout=5) as resp:
            assert resp.status == 200
            s = parse(resp.read().decode())
        assert {lab["gpu"]: v for lab, v in s[names.UP]} == {"0": 0.0, "1": 1.0}
        assert samples(s, names.POWER, gpu="1") == [627.4]
    finally:
        sidecar.stop()
    assert fake.closed
