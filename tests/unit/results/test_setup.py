"""RunSetup and LoadState: a live run's setup (RunConfig + profile) and the one read back from its summary are equal."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from llmload.config import RunConfig
from llmload.config.flags import defaults, flag
from llmload.errors import ConfigError
from llmload.metrics.recorder import MetricSet
from llmload.metrics.slo import SLO
from llmload.results import SummaryError, build_result, from_summary, to_summary
from llmload.results.setup import ArrivalSetup, LadderSetup, LoadState, PrefixSetup, RunSetup, TraceSetup
from llmload.workload.profiles import load_profile, profile_from_dict

TRACE = Path(__file__).resolve().parents[3] / "examples" / "traces" / "mooncake-example.jsonl"

PROFILE = profile_from_dict({
    "name": "mixset",
    "classes": [
        {"name": "rag", "weight": 2, "input_tokens": {"dist": "uniform", "min": 40, "max": 80}, "output_tokens": 20,
         "prefix": {"groups": 2, "tokens": 200}, "slo": {"ttft_ms": 150}},
        {"name": "chat", "weight": 1, "input_tokens": 30, "output_tokens": 10, "turns": 3},
        {"name": "plain", "weight": 1, "input_tokens": 20, "output_tokens": 15},
    ],
})  # fmt: skip


def config(**flags) -> RunConfig:
    return RunConfig.from_values({**defaults(), "model": "m", "seed": 7, **flags})


@pytest.mark.parametrize(
    "flags",
    [
        {},
        {"ladder": "1,2,4", "step_time": "5s", "step_warmup": "1s", "slo": "tpot_ms=50", "degradation": 0.3},
        {"arrival": "poisson", "rate_ladder": "2,4", "users": 8, "step_time": "5s", "step_warmup": "1s",
         "slo_attainment": 0.9, "max_tokens_cap": 30, "ignore_eos": True},
        {"arrival": "gamma", "burstiness": 2, "rate": 3},
        {"trace": str(TRACE), "trace_speedup": 50, "trace_limit": 10, "profile": None},
    ],
)  # fmt: skip
def test_a_live_setup_equals_the_one_read_back_from_its_summary(flags):
    cfg = config(**flags)
    live = RunSetup.from_run(cfg, PROFILE, "http://user:secret@10.0.0.1:8000")
    assert live.config == {**cfg.public_dict(), "host": "http://10.0.0.1:8000"}  # the summary's dicts, as before
    assert live.profile == PROFILE.to_dict() and "secret" not in repr(live)
    assert RunSetup.from_summary(live.config, live.profile) == live
    result = build_result(MetricSet(), duration_s=1.0, users_max=1, weights={}, setup=live)
    summary = to_summary(result)
    assert (summary["config"], summary["profile"]) == (live.config, live.profile)
    assert from_summary(summary).setup == live


def test_the_typed_fields_of_a_live_run():
    cfg = config(ladder="1,2,4", step_time="5s", step_warmup="1s", slo="tpot_ms=50", degradation=0.3)
    s = RunSetup.from_run(cfg, PROFILE)
    assert (s.api, s.model, s.host, s.workload, s.profile_name, s.seed) == ("openai-chat", "m", None, "default", "mixset", 7)
    assert (s.degradation, s.slo, s.slo_attainment) == (0.3, SLO(tpot_ms=50.0), flag("slo_attainment").default)
    assert s.ladder == LadderSetup((1, 2, 4), 5.0, 1.0, False, 0) and s.ladder.to_dict() == cfg.ladder.public_dict()
    assert s.arrival == ArrivalSetup() and s.config["host"] is None
    rag, chat, plain = s.classes
    assert (rag.sharing, rag.prefix, rag.input_tokens_mean, rag.weight) == ("prefix groups", PrefixSetup(2, 200), 60.0, 2.0)
    assert (chat.sharing, chat.conversation, plain.sharing) == ("conversation", True, None)
    assert s.slos == {"rag": SLO(150.0, 50.0), "chat": SLO(tpot_ms=50.0), "plain": SLO(tpot_ms=50.0)}
    assert s.cls("chat") is chat and s.cls("nope") is None


def test_open_loop_and_trace_setups():
    gamma = RunSetup.from_run(config(arrival="gamma", burstiness=2, rate=3), PROFILE).arrival
    assert gamma == ArrivalSetup("gamma", 3.0, 2.0)
    rated = RunSetup.from_run(config(arrival="poisson", rate_ladder="2,4", users=8, step_time="5s", step_warmup="1s"),
                              PROFILE)  # fmt: skip
    assert rated.arrival == ArrivalSetup("poisson", None, None, (2.0, 4.0)) and rated.ladder.rates == (2.0, 4.0)
    trace = RunSetup.from_run(config(trace=str(TRACE), trace_speedup=50, profile=None), load_profile("default"))
    assert trace.arrival == ArrivalSetup("trace", trace=TraceSetup(str(TRACE), 50.0, None))


def test_a_summary_without_settings_takes_the_flag_tables_defaults():
    s = RunSetup.from_summary(None, None)
    assert s == RunSetup() and s.config == {} and s.profile == {}
    assert (s.degradation, s.slo_attainment) == (flag("degradation").default, flag("slo_attainment").default)
    assert s.slos is None and s.ladder is None and s.arrival.mode == "closed"
    assert RunSetup.from_summary({"degradation": 0.2, "slo_attainment": 0.95}, {}).degradation == 0.2
    assert RunSetup.from_summary({"host": ""}, {}).host is None


def test_the_slo_table_of_a_summary_own_limits_over_the_flags_key_by_key():
    profile = {"classes": [{"name": "a", "slo": {"ttft_ms": 300}}, {"name": "b"}, "not a class"]}
    assert RunSetup.from_summary({"slo": {"ttft_ms": 800.0, "tpot_ms": 25.0}}, profile).slos == {
        "a": SLO(300.0, 25.0), "b": SLO(800.0, 25.0)}  # fmt: skip
    assert RunSetup.from_summary({"slo": "e2e_ms=5"}, profile).slos["b"] == SLO(e2e_ms=5.0)  # a hand-made summary's text
    assert RunSetup.from_summary({}, {"classes": [{"name": "a"}]}).slos is None
    with pytest.raises(ConfigError, match=r"^profile.slo: "):
        RunSetup.from_summary({}, {"classes": [{"name": "a", "slo": {"ttft": 3}}]})


def test_a_dataset_class_has_no_prompt_mean():
    c = RunSetup.from_summary({}, {"classes": [{"name": "d", "prompt": {"source": "dataset"}, "prefix": {"tokens": 9}}]})
    assert c.classes[0].input_tokens_mean is None and c.classes[0].prefix == PrefixSetup(1, 9)


def test_the_load_state_is_written_under_the_summarys_names():
    state = LoadState(workers=2, workers_lost=("w2",), saturated=True, saturated_processes=("w1",))
    result = replace(build_result(MetricSet(), duration_s=1.0, users_max=1, weights={}), load=state)
    s = to_summary(result)
    assert (s["workers"], s["workers_lost"], s["client"]) == (2, ["w2"], {"saturated": True, "saturated_processes": ["w1"]})
    assert from_summary(s).load == state
    standalone = to_summary(build_result(MetricSet(), duration_s=1.0, users_max=1, weights={}))
    assert "workers" not in standalone and from_summary(standalone).load == LoadState()


def test_a_summary_with_an_unreadable_slo_is_one_line():
    with pytest.raises(SummaryError, match=r"^not a readable llmload summary \(ConfigError: config.slo: unknown SLO 'ttft'"):
        from_summary({"overall": {}, "config": {"slo": {"ttft": 3}}})
