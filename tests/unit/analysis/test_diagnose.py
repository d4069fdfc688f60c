from __future__ import annotations

import re
from pathlib import Path

from llmload.analysis import NOT_ENOUGH_SIGNALS, RULES, diagnose, rule_ids
from llmload.analysis.findings import Finding
from tests.helpers.analysis_data import analyzed, step, summary
from tests.unit.analysis.test_rules import batch_starved, ctx_of, frag_ladder, kv_ladder, srv

DOC = Path(__file__).resolve().parents[3] / "docs" / "diagnosis.md"


def ids(findings):
    return [f.id for f in findings]


def test_without_server_or_gpu_signals_only_client_rules_run_and_the_gap_is_reported():
    ladder = (step(0, 1), step(1, 4, ttft=500.0), step(2, 8, ok=80, errors=20, kinds={"http_429": 20}))
    findings = diagnose(ctx_of(*ladder))
    assert ids(findings) == ["errors_shedding", NOT_ENOUGH_SIGNALS]
    nes = findings[-1]
    assert nes.evidence == {"server_signals": False, "gpu_signals": False, "rules_skipped": 8, "rules_reduced": 0}
    assert "--engine-metrics" in nes.change and "--gpu-metrics" in nes.change
    assert any("admission_cap" in t for t in nes.evidence_text)
    assert ids(diagnose(ctx_of(step(0, 1), step(1, 4, ttft=500.0)))) == [NOT_ENOUGH_SIGNALS]  # no guess


def test_server_without_gpu_runs_the_server_rules_at_lower_confidence():
    findings = diagnose(ctx_of(*batch_starved(with_gpu=False)))
    assert findings[0].id == "admission_cap" and findings[0].confidence == "medium"
    nes = findings[-1]
    assert nes.id == NOT_ENOUGH_SIGNALS and nes.evidence["server_signals"] and not nes.evidence["gpu_signals"]
    assert any(t.startswith("rules not evaluated: decode_bandwidth, scheduler_starved") for t in nes.evidence_text)
    assert any("lower confidence" in t and "admission_cap" in t for t in nes.evidence_text)
    # only the missing source is asked for: a llama.cpp run with --engine-metrics was told to add it
    assert "--gpu-metrics" in nes.change and "--engine-metrics" not in nes.change


def test_all_signals_no_gap_finding():
    assert NOT_ENOUGH_SIGNALS not in ids(diagnose(ctx_of(*batch_starved())))


def test_saturated_load_generator_first_and_the_binding_metric_ranks_next():
    findings = diagnose(ctx_of(*batch_starved(util=0.45), saturated=True))
    assert ids(findings) == ["load_generator_saturated", "admission_cap", "scheduler_starved"]


def test_a_finding_that_explains_the_breach_outranks_one_that_does_not():
    # errors breach at 8 users; the KV cache is also full there (explains ttft/tpot, not errors)
    ladder = frag_ladder(kv=0.6)
    findings = diagnose(ctx_of(*ladder))
    assert findings[0].id == "kv_fragmentation"
    assert ids(findings)[:2] == ["kv_fragmentation", "errors_shedding"]


def test_rank_uses_confidence_then_the_breach_then_table_order():
    from llmload.analysis.diagnose import rank

    ctx = ctx_of(*kv_ladder())  # breach: ttft_p50 at step 3
    mk = lambda i, conf, explains=(), step=None: Finding(i, "x", i, conf, {}, [], "", step=step, explains=explains)  # noqa: E731
    ranked = rank([
        mk("errors_shedding", "medium"),
        mk("gateway_queueing", "medium", ("ttft",)),
        mk("kv_capacity", "medium", ("ttft",), step=3),
        mk("decode_bandwidth", "high"),
        mk(NOT_ENOUGH_SIGNALS, "high"),
    ], ctx)  # fmt: skip
    assert ids(ranked) == ["decode_bandwidth", "kv_capacity", "gateway_queueing", "errors_shedding", NOT_ENOUGH_SIGNALS]


def test_analyze_a_batch_starved_ladder_end_to_end():
    s = analyzed(summary(list(batch_starved())))
    assert s["verdict"]["status"] == "breach" and s["verdict"]["safe_users"] == 4
    assert s["verdict"]["breach"]["metric"] == "ttft_p50"
    top = s["findings"][0]
    assert top["id"] == "admission_cap" and top["confidence"] == "high" and top["step"] == 2 and top["users"] == 8
    assert set(top) == {
        "id",
        "layer",
        "title",
        "confidence",
        "evidence",
        "evidence_text",
        "change",
        "step",
        "users",
        "explains",
    }


def test_plain_run_diagnosis_reads_the_whole_run():
    s = {
        "users_max": 8, "duration_s": 30.0, "overall": step(0, 8)["overall"], "classes": {},
        "client": {"saturated": False},
        "server": {"signals": {"kv_cache_usage": {"mean": 0.95, "max": 1.0}, "waiting": {"mean": 2.0},
                               "running": {"mean": 6.0}, "preemptions": {"increase": 30.0, "rate_per_s": 1.0}}},
    }  # fmt: skip
    s = analyzed(s)
    assert s["verdict"]["status"] == "no_ladder"
    assert ids_of(s) == ["kv_capacity", NOT_ENOUGH_SIGNALS] and s["findings"][0]["step"] is None


def ids_of(s):
    return [f["id"] for f in s["findings"]]


def test_the_doc_table_lists_every_rule_in_the_code_order():
    section = DOC.read_text().split("## Diagnosis rules", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| ", section, flags=re.M)
    assert rows == [*rule_ids(), NOT_ENOUGH_SIGNALS]
    for r in RULES:
        assert r.rule_id in DOC.read_text() and r.__doc__


def test_quiet_ladder_has_no_findings():
    healthy = tuple(step(i, u, ttft=50.0 + i, tpot=20.0 + i, server=srv(running=float(u)), gpu={"utilization": 0.9})
                    for i, u in enumerate([1, 2, 4]))  # fmt: skip
    assert diagnose(ctx_of(*healthy)) == []
