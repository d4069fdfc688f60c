"""The arrival flags: closed by default, open-loop processes need a rate, every mistake is one line."""

from __future__ import annotations

import pytest

from llmload.config import RunConfig
from llmload.config.arrival import ArrivalConfig, parse_rates
from llmload.errors import ConfigError


def cfg(**values):
    return ArrivalConfig.from_values({"arrival": "closed", "rate": None, "burstiness": 1.0, "rate_ladder": "", **values})


def test_the_default_is_the_closed_loop_and_says_only_its_mode():
    a = cfg()
    assert not a.open_loop and a.rate is None
    assert a.public_dict() == {"mode": "closed"}
    assert "arrival" not in RunConfig.from_values({}).public_dict()  # closed loop: the config block as before


def test_open_loop_processes_at_a_rate():
    a = cfg(arrival="gamma", rate="12.5", burstiness="0.25")
    assert a.open_loop and a.rate == 12.5 and a.spec.burstiness == 0.25 and a.first_rate == 12.5
    assert a.public_dict() == {"mode": "gamma", "rate": 12.5, "burstiness": 0.25}
    run = RunConfig.from_values({"arrival": "poisson", "rate": 3.0})
    assert run.arrival.mode == "poisson" and run.public_dict()["arrival"] == {"mode": "poisson", "rate": 3.0}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"rate": 5.0}, "--rate 5: needs an open-loop arrival; add --arrival poisson"),
        ({"rate_ladder": "1,2"}, "--rate-ladder: needs an open-loop arrival"),
        ({"burstiness": 0.5}, "--burstiness 0.5: is the shape of --arrival gamma"),
        ({"arrival": "poisson"}, "--arrival poisson: needs --rate R"),
        ({"arrival": "constant", "rate": 0}, "--rate 0: must be > 0"),
        ({"arrival": "constant", "rate": -2}, "--rate -2: must be > 0"),
        ({"arrival": "constant", "rate": "fast"}, "--rate 'fast': must be a number"),
        ({"arrival": "poisson", "rate": 2, "burstiness": 2}, "is the shape of --arrival gamma, not poisson"),
        ({"arrival": "gamma", "rate": 2, "burstiness": 0}, "--burstiness 0: must be > 0"),
        ({"arrival": "gamma", "rate": 2, "rate_ladder": "1,2"}, "--rate and --rate-ladder: give one"),
        ({"arrival": "often"}, "--arrival 'often': choose one of closed, constant, poisson, gamma"),
        # More than a run can offer: --rate 1e9 queued tickets until the kernel killed the process at 24 GB.
        ({"arrival": "constant", "rate": 1e9}, "--rate 1e+09: more than llmload can offer (100,000 req/s for a run"),
        ({"arrival": "poisson", "rate": 1e6}, "--rate 1e+06: more than llmload can offer"),
        ({"arrival": "poisson", "rate_ladder": "10,2e5"}, "200000 req/s is more than llmload can offer"),
        ({"arrival": "gamma", "rate": 2, "burstiness": 1e-9}, "--burstiness 1e-09: must be >= 0.01"),
    ],
)
def test_every_mistake_is_one_line(values, message):
    with pytest.raises(ConfigError) as e:
        cfg(**values)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_largest_rate_and_the_burstiest_shape_are_accepted():
    assert cfg(arrival="poisson", rate=100_000).rate == 100_000
    assert cfg(arrival="gamma", rate=5, burstiness=0.01).spec.burstiness == 0.01


def test_a_concurrency_ladder_is_not_an_open_loop():
    with pytest.raises(ConfigError, match="use --rate-ladder"):
        RunConfig.from_values({"arrival": "poisson", "rate": 2.0, "ladder": "1,2"})


def test_rate_ladder_levels():
    assert parse_rates("1, 2,4.5") == (1.0, 2.0, 4.5)
    a = cfg(arrival="constant", rate_ladder="1,2,4")
    assert a.rate is None and a.rate_levels == (1.0, 2.0, 4.0) and a.first_rate == 1.0
    for bad, message in (("2,1", "must increase"), ("1,x", "separated by commas"), ("0,1", "> 0")):
        with pytest.raises(ConfigError, match=message):
            parse_rates(bad)


def test_a_rate_ladder_holds_the_u_cap_at_every_step():
    from llmload.config.ladder import LadderConfig

    values = {"ladder": "1,5,10", "rate_ladder": "2,4,8", "num_users": 32, "baseline_requests": 0,
              "step_time": "10s", "step_warmup": "2s", "stop_on_breach": True}  # fmt: skip
    plan = LadderConfig.from_values(values)  # --rate-ladder takes the place of --ladder (the ladder locustfile's default)
    assert plan.by_rate and plan.levels == (32, 32, 32) and plan.rates == (2.0, 4.0, 8.0)
    assert plan.rate_at(1) == 4.0 and plan.rate_at(-1) is None and plan.public_dict()["rates"] == [2.0, 4.0, 8.0]
    with pytest.raises(ConfigError, match="--baseline-requests with --rate-ladder"):
        LadderConfig.from_values({**values, "baseline_requests": 5})
    run = RunConfig.from_values({"arrival": "poisson", "rate_ladder": "1,2", "ladder": "1,5", "num_users": 4})
    assert run.ladder is not None and run.ladder.rates == (1.0, 2.0) and run.arrival.first_rate == 1.0


def test_a_trace_is_its_own_open_loop_mode_with_speedup_and_limit():
    a = cfg(trace="t.jsonl", trace_speedup="2.5", trace_limit="50")
    assert a.open_loop and a.mode == "trace" and a.rate is None and a.rate_levels == ()
    assert (a.trace.path, a.trace.speedup, a.trace.limit) == ("t.jsonl", 2.5, 50)
    assert a.public_dict() == {"mode": "trace", "rate": None, "trace": {"file": "t.jsonl", "speedup": 2.5, "limit": 50}}
    whole = cfg(trace="t.jsonl", trace_limit=0)  # 0 = the whole trace
    assert whole.trace.limit is None and whole.trace.speedup == 1.0
    run = RunConfig.from_values({"trace": "t.jsonl"})
    assert run.arrival.mode == "trace" and run.public_dict()["arrival"]["trace"]["file"] == "t.jsonl"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"trace": "t.jsonl", "arrival": "poisson", "rate": 3.0}, "--trace with --arrival poisson: a trace sets its own send times"),
        ({"trace": "t.jsonl", "rate": 3.0}, "--trace with --rate: a trace sets its own send times"),
        ({"trace": "t.jsonl", "burstiness": 0.5}, "--trace with --burstiness"),
        ({"trace": "t.jsonl", "trace_speedup": 0}, "--trace-speedup 0: must be > 0"),
        ({"trace": "t.jsonl", "trace_speedup": "fast"}, "--trace-speedup 'fast': must be a number"),
        ({"trace": "t.jsonl", "trace_limit": -1}, "--trace-limit -1: must be >= 1"),
        ({"trace_speedup": 2.0}, "--trace-speedup 2: needs --trace FILE.jsonl"),
        ({"trace_limit": 10}, "--trace-limit 10: needs --trace FILE.jsonl"),
    ],
)
def test_trace_mistakes_are_one_line(values, message):
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        cfg(**values)


def test_a_ladder_with_a_trace_is_refused():
    with pytest.raises(ConfigError, match="^--ladder with --trace: a trace replay sends the trace's load"):
        RunConfig.from_values({"trace": "t.jsonl", "ladder": "1,2"})


def test_a_profile_with_a_trace_is_refused_except_on_a_worker():
    with pytest.raises(ConfigError, match="^--profile quadrants with --trace: the trace replaces the profile"):
        RunConfig.from_values({"trace": "t.jsonl", "profile": "quadrants"})
    assert RunConfig.from_values({"trace": "t.jsonl", "profile": "quadrants"}, worker=True).arrival.mode == "trace"
