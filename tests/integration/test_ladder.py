"""Short real ladders against the simulator's presets: the verdict and the top finding name the bottleneck.

Each test starts ``python -m llmload.sim --preset ...`` (step costs scaled down with
``--time-scale``), runs ``llmload run --ladder ...`` as a child process with collection on
(the simulator's own /metrics serves the vLLM and the simulated GPU series) and reads the
summary. Steps are 8 s with a 2 s warm-up; profiles are single-class with a spread of
lengths (users that send identical requests fall into lockstep and queue behind each
other's prefills) so that each step's p50 is steady on a busy 2-core machine. The
settings and the figures they give are tabled in docs/diagnosis.md. A ladder has only the
steps its assertions read: where the test asserts one breach or the top step, the baseline
step and that step (each step is 8 s of test time).

The module's ladders run side by side (:func:`ladders`, a module fixture: each against a
simulator of its own, ~0.1 core each: the five took 13 s of CPU over 131 s one after the
other), so the module takes the wall time of the longest (~37 s) instead of the sum (~125 s);
each test asserts on its own ladder's summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gevent
import pytest

from llmload.sim import start_sim_process
from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration

STEP = ["--step-time", "8s", "--step-warmup", "2s"]
# The same model on an H200 (docs/simulator.md), with a light host overhead: a service with room to spare.
H200 = ["--gpu-name", "NVIDIA H200", "--gpu-memory-gib", "140.4", "--gpu-bandwidth-gbs", "4800", "--gpu-power-max-w", "700",
        "--step-base-ms", "4.2", "--per-kv-token-us", "0.016", "--prefill-tps", "29000", "--max-batched-tokens", "2048",
        "--host-overhead-ms", "1"]  # fmt: skip


def write_profile(path: Path, inputs: tuple[int, int], outputs: tuple[int, int]) -> str:
    """A one-class profile of uniform input and output lengths; returns its path."""
    path.write_text(
        'name = "ladder-test"\n[[classes]]\nname = "chat"\nweight = 1\n'
        f'input_tokens = {{dist = "uniform", min = {inputs[0]}, max = {inputs[1]}}}\n'
        f'output_tokens = {{dist = "uniform", min = {outputs[0]}, max = {outputs[1]}}}\n'
    )
    return str(path)


@dataclass(frozen=True)
class Ladder:
    """One test's run: the simulator's flags, the profile's lengths and the load flags."""

    sim: tuple[str, ...]
    inputs: tuple[int, int]
    outputs: tuple[int, int]
    load: tuple[str, ...]


BATCH_STARVED = ("--preset", "batch-starved", "--time-scale", "0.25")  # --max-num-seqs 4
BANDWIDTH_BOUND = ("--preset", "bandwidth-bound", "--time-scale", "0.2", "--prefill-tps", "20000",
                   "--max-batched-tokens", "4096")  # fmt: skip
# Keyed by the test that reads the run.
LADDERS = {
    # --stop-on-breach: the breach at 8 users is judged a report interval into the 16-user step; 32 never runs.
    "test_batch_starved_safe_at_the_batch_cap_ttft_binds": Ladder(
        BATCH_STARVED, (150, 250), (32, 64), ("--ladder", "1,4,8,16,32", "--stop-on-breach")
    ),
    # Prefill made fast and unchunked so that the steps measure decode; long prompts keep TTFT dominated by prefill.
    # 1 -> 8 users: TPOT p50 2.7 -> 6.0 ms (2.2x) while TTFT stays within 1.35x.
    "test_bandwidth_bound_tpot_binds": Ladder(BANDWIDTH_BOUND, (1280, 1792), (96, 288), ("--ladder", "1,8")),
    # 1 -> 8 users: the pool (~4 sequences' worth) fills and preempts at 8, TTFT p50 11 -> 100+ ms.
    "test_kv_pressure_names_the_kv_cache": Ladder(
        ("--preset", "kv-pressure", "--time-scale", "0.2", "--kv-blocks", "40"),
        (40, 80),
        (60, 100),
        ("--ladder", "1,8"),
    ),
    "test_healthy_with_room_holds_the_top_step": Ladder(
        ("--preset", "healthy", "--time-scale", "0.5", *H200), (800, 1200), (96, 160), ("--ladder", "1,4")
    ),
    # Offered rates at a fixed in-flight cap (-u 32): 4 req/s fit the batch of 4, 16 req/s queue behind it.
    "test_rate_ladder_against_batch_starved_names_the_safe_rate_and_the_binding_metric": Ladder(
        BATCH_STARVED,
        (150, 250),
        (32, 64),
        ("--arrival", "constant", "--rate-ladder", "2,4,16,32", "-u", "32", "--stop-on-breach"),
    ),
}


def _run(spec: Ladder, folder: Path) -> tuple[int, str, dict | None]:
    with start_sim_process(list(spec.sim), timeout=20) as server:
        profile = write_profile(folder / "profile.toml", spec.inputs, spec.outputs)
        return run_cli(
            ["--headless", "--host", server.url, *spec.load, *STEP, "--engine-metrics", server.url,
             "--gpu-metrics", server.url, "--collect-interval", "0.5s", "--no-run-dir", "--seed", "7",
             "--loglevel", "WARNING", "--profile", profile],
            folder,
            timeout=90,
        )  # fmt: skip


@pytest.fixture(scope="module")
def ladders(request, tmp_path_factory) -> dict[str, gevent.Greenlet]:
    """The selected tests' runs, started side by side and all finished: {test name: greenlet}; its
    ``get()`` is (code, output, summary), or raises what went wrong in that run only."""
    selected = {item.name for item in request.session.items if item.module is request.module}
    jobs = {
        name: gevent.spawn(_run, spec, tmp_path_factory.mktemp("ladder"))
        for name, spec in LADDERS.items()
        if name in selected
    }
    gevent.joinall(list(jobs.values()))
    return jobs


def describe(s: dict) -> str:
    """The figures behind a verdict, for assertion messages."""
    lines = []
    for st in s.get("steps") or []:
        o, srv, gpu = st["overall"], st.get("server") or {}, st.get("gpu") or {}
        m = lambda part, k: (part.get(k) or {}).get("mean")  # noqa: E731
        lines.append(
            f"step {st['index']} users {st['users']}: ok {o['ok']} err {o['errors']} TTFT p50 {o['ttft_ms']['p50']} "
            f"TPOT p50 {o['tpot_ms']['p50']} | W {m(srv, 'waiting')} R {m(srv, 'running')} KV {m(srv, 'kv_cache_usage')} "
            f"P/s {m(srv, 'preemptions_rate_per_s')} U {m(gpu, 'utilization')} BW {m(gpu, 'memory_bandwidth_utilization')}"
        )
    v = s.get("verdict") or {}
    lines.append(f"verdict {v.get('status')} safe {v.get('safe_users')} breach {v.get('breach')}")
    lines += [
        f"finding {f['id']} ({f['confidence']}, step {f['step']}): {f['evidence_text']}"
        for f in s.get("findings") or []
    ]
    lines.append(f"client {s.get('client')}")
    return "\n".join(lines)


def ladder(ladders: dict, name: str, steps: int | None = None) -> dict:
    """The summary of the test's ladder; ``steps``: how many steps it should have run (default: all)."""
    code, output, s = ladders[name].get()
    assert s is not None, output[-3000:]
    assert s["schema"] == "llmload.summary/2"
    levels = LADDERS[name].load[LADDERS[name].load.index("--ladder") + 1]
    assert len(s["steps"]) == (steps or len(levels.split(","))), describe(s)
    for st in s["steps"]:  # collection reached every full steady window
        if st["steady_s"] >= 5:
            assert st["server"]["running"]["samples"] >= 3 and "utilization" in st["gpu"], describe(s)
    return s


def top_finding(s: dict) -> dict:
    """The most likely bottleneck; a saturated load generator (a busy shared machine) ranks first and is passed over."""
    findings = [f for f in s["findings"] if f["id"] != "load_generator_saturated"]
    assert findings, describe(s)
    return findings[0]


@pytest.mark.slow  # over 20 s
def test_batch_starved_safe_at_the_batch_cap_ttft_binds(ladders):
    s = ladder(ladders, "test_batch_starved_safe_at_the_batch_cap_ttft_binds", steps=4)
    assert s["steps"][-1]["users"] == 16 and s["steps"][-1]["steady_s"] < 8, describe(s)
    v = s["verdict"]
    assert v["status"] == "breach" and v["safe_users"] == 4, describe(s)
    assert v["breach"]["metric"] == "ttft_p50" and v["breach"]["users"] == 8, describe(s)
    assert s["baseline"]["source"] == "step" and s["baseline"]["users"] == 1
    tpot = [st["overall"]["tpot_ms"]["p50"] for st in s["steps"][:3]]
    assert max(tpot) < 1.3 * min(tpot), describe(s)  # the batch never grows past 4
    top = top_finding(s)
    assert top["id"] == "admission_cap" and top["title"] == "Batch / admission cap", describe(s)
    assert top["users"] == 8 and top["evidence"]["running_ceiling"] == 4.0, describe(s)
    assert v["recommended_limit"] is not None and v["recommended_limit"] <= 4


def test_bandwidth_bound_tpot_binds(ladders):
    s = ladder(ladders, "test_bandwidth_bound_tpot_binds")
    v = s["verdict"]
    assert v["status"] == "breach" and v["breach"]["metric"] == "tpot_p50", describe(s)
    top = top_finding(s)
    assert top["id"] == "decode_bandwidth" and top["title"] == "Decode memory-bandwidth bound", describe(s)
    assert top["explains"] == ["tpot"]


def test_kv_pressure_names_the_kv_cache(ladders):
    s = ladder(ladders, "test_kv_pressure_names_the_kv_cache")
    assert s["verdict"]["status"] == "breach", describe(s)
    top = top_finding(s)
    assert top["id"] == "kv_capacity" and top["layer"] == "engine KV cache", describe(s)
    assert top["evidence"]["kv_cache_usage"] >= 0.9 and top["evidence"]["preemptions_per_s"] > 0, describe(s)


def test_healthy_with_room_holds_the_top_step(ladders):
    s = ladder(ladders, "test_healthy_with_room_holds_the_top_step")
    v = s["verdict"]
    assert v["status"] == "ok" and v["breach"] is None, describe(s)
    assert v["safe_users"] == v["top_users"] == 4 and v["safe_step"] == 1
    assert not [f for f in s["findings"] if f["confidence"] == "high" and f["id"] != "load_generator_saturated"], (
        describe(s)
    )


@pytest.mark.slow  # over 20 s
def test_rate_ladder_against_batch_starved_names_the_safe_rate_and_the_binding_metric(ladders):
    """Offered rates at a fixed in-flight cap (-u 32): 4 req/s fit the batch of 4, 16 req/s queue behind it."""
    code, output, s = ladders["test_rate_ladder_against_batch_starved_names_the_safe_rate_and_the_binding_metric"].get()
    assert s is not None, output[-3000:]
    steps = s["steps"]
    # --stop-on-breach: 16 req/s is judged after its step closed, a few seconds into the 32 req/s step.
    assert [st["rate_offered"] for st in steps] == [2, 4, 16, 32] and steps[-1]["steady_s"] < 8, describe(s)
    assert all(st["users"] == 32 for st in steps)
    for st in steps[:2]:  # below the cap: each step achieves its offered rate
        assert st["rate_achieved"] == pytest.approx(st["rate_offered"], rel=0.2), describe(s)
    v = s["verdict"]
    assert v["status"] == "breach" and v["safe_rate"] == 4, describe(s)
    assert v["breach"]["metric"] == "ttft_p50" and v["breach"]["rate"] == 16, describe(s)
    assert s["baseline"]["step"] == 0 and s["baseline"]["source"] == "lowest-step"
    assert s["arrival"]["mode"] == "constant" and s["arrival"]["offered_rate"] is None
    assert "verdict: safe rate 4 req/s; ttft_p50 broke the limit at 16 req/s" in output
