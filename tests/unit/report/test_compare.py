from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest

from llmload.report.commands import compare_main
from llmload.report.compare import COMPARE_SCHEMA, compare_runs, write_console, write_json, write_markdown
from llmload.results import from_summary
from llmload.rundir import Run, write_run_dir
from tests.helpers import samples


def run(summary, name) -> Run:
    return Run.from_summary(Path("."), name, summary)


def after() -> dict:
    """The same ladder after a fix: TTFT at 8 users is fine, one step more, one step less."""
    s = samples.ladder_summary()
    s["steps"][2]["overall"]["ttft_ms"]["p50"] = 70.0
    s["steps"][2]["overall"]["output_tokens_per_s"] = 400.0
    extra = copy.deepcopy(s["steps"][3])
    extra.update(index=4, users=32)
    s["steps"] = [*s["steps"][:3], extra]
    s["verdict"].update(safe_users=8, recommended_limit=8, breach={"step": 3, "users": 32, "metric": "tpot_p50"})
    return s


def rows_by(c, scope):
    return {r["metric"]: r for r in c["rows"] if r["scope"] == scope}


def test_steps_matched_by_users_with_deltas():
    c = compare_runs(run(samples.ladder_summary(), "before"), run(after(), "after"))
    assert c["schema"] == COMPARE_SCHEMA
    assert [r["scope"] for r in c["rows"][::6]] == ["overall", "1 user", "4 users", "8 users", "16 users", "32 users"]
    eight = rows_by(c, "8 users")
    assert eight["TTFT p50"]["a"] == 1200.0 and eight["TTFT p50"]["b"] == 70.0
    assert eight["TTFT p50"]["delta"] == -1130.0 and eight["TTFT p50"]["pct"] == pytest.approx(-1130 / 1200, abs=1e-6)
    assert eight["TTFT p50"]["change"] == "better"
    assert eight["output tok/s"]["change"] == "better" and eight["output tok/s"]["delta"] == 170.0
    assert rows_by(c, "1 user")["TTFT p50"]["change"] == "same"
    only_a, only_b = rows_by(c, "16 users")["TTFT p50"], rows_by(c, "32 users")["TTFT p50"]
    assert only_a["b"] is None and only_a["delta"] is None and only_a["change"] is None
    assert only_b["a"] is None and only_b["b"] == 3900.0
    assert c["a"]["safe_users"] == 4 and c["b"]["safe_users"] == 8 and c["b"]["binding"] == "tpot_p50"


def test_direction_of_change():
    a, b = samples.plain_summary(), samples.plain_summary()
    b["overall"]["ttft_ms"]["p99"] *= 1.5
    b["overall"]["errors"] = 12
    b["overall"]["output_tokens_per_s"] = 100.0
    o = rows_by(compare_runs(run(a, "a"), run(b, "b")), "overall")
    assert o["TTFT p99"]["change"] == "worse" and o["error rate"]["change"] == "worse" and o["output tok/s"]["change"] == "worse"
    assert o["TTFT p50"]["change"] == "same" and o["TTFT p50"]["delta"] == 0
    assert len(compare_runs(run(a, "a"), run(b, "b"))["rows"]) == 6  # no steps: overall only


def test_writers():
    c = compare_runs(run(samples.ladder_summary(), "before"), run(after(), "after"))
    buf = io.StringIO()
    write_console(c, buf)
    text = buf.getvalue()
    assert "safe concurrency: 4 -> 8 users" in text and "A (before): before" in text
    line = next(ln for ln in text.splitlines() if ln.startswith("8 users"))
    assert line.split()[3:] == ["p50", "(ms)", "1,200", "70.0", "-1,130", "-94.2", "%", "better"]
    buf = io.StringIO()
    write_markdown(c, buf)
    md = buf.getvalue()
    assert "| 8 users | TTFT p50 (ms) | 1,200 | 70.0 | -1,130 | -94.2 % | better |" in md
    assert "|  | TTFT p99 (ms) |" in md
    buf = io.StringIO()
    write_json(c, buf)
    assert json.loads(buf.getvalue()) == json.loads(json.dumps(c))


def test_compare_command(tmp_path, capsys):
    a = write_run_dir(tmp_path, from_summary(samples.ladder_summary()))
    b = write_run_dir(tmp_path, from_summary(after()))
    assert compare_main([str(a), str(b)]) == 0
    assert "llmload compare" in capsys.readouterr().out
    assert compare_main([str(a), str(b / "summary.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["b"]["safe_users"] == 8
    out = tmp_path / "cmp.md"
    assert compare_main([str(a), str(b), "--markdown", "--out", str(out)]) == 0
    assert out.read_text().startswith("## Before / after")
    assert compare_main([str(a), str(tmp_path / "missing")]) == 2
    assert "missing: no such run directory" in capsys.readouterr().err


@pytest.mark.parametrize("config", [{"ladder": 5}, {"arrival": 5}])
def test_compare_of_a_summary_with_a_value_of_the_wrong_type_is_one_line(tmp_path, capsys, config):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "llmload.summary/2", "overall": {}, "config": config}))
    good = write_run_dir(tmp_path, from_summary(samples.ladder_summary()))
    assert compare_main([str(good), str(bad)]) == 2  # was an AttributeError traceback
    err = capsys.readouterr().err.splitlines()
    assert err == [f"llmload compare: error: {bad}: not a readable llmload summary (AttributeError: 'int' object has no attribute 'get')"]


def test_compare_analyses_a_summary_written_before_the_analysis(tmp_path, capsys):
    """As llmload report does: a ladder summary without a verdict still gets its safe concurrency compared."""
    old = samples.ladder_summary()
    for key in ("verdict", "baseline", "findings"):
        old.pop(key)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    assert compare_main([str(path), str(path), "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["a"]["safe_users"] is not None and c["a"]["safe_users"] == c["b"]["safe_users"]


def test_an_inconclusive_verdict_is_marked_in_the_headline():
    """Its safe concurrency is what it would have said on too few requests: not a before/after figure to trust."""
    b = after()
    b["verdict"].update(status="inconclusive", inconclusive={"judged_status": "breach", "reasons": ["few"]})
    c = compare_runs(run(samples.ladder_summary(), "before"), run(b, "after"))
    assert c["a"]["status"] == "breach" and c["b"]["status"] == "inconclusive"
    buf = io.StringIO()
    write_console(c, buf)
    assert "safe concurrency: 4 -> 8 (inconclusive) users;" in buf.getvalue()


def test_differences_in_settings_are_noted():
    a, b = samples.ladder_summary(), after()
    assert compare_runs(run(a, "a"), run(b, "b"))["notes"] == []
    b["config"]["ladder"]["levels"] = [1, 4, 8, 32]
    b["config"]["max_tokens_cap"] = 128
    c = compare_runs(run(a, "a"), run(b, "b"))
    assert c["notes"] == ["max tokens cap differs: 64 (A) vs 128 (B)", "ladder differs: 1,4,8,16 (A) vs 1,4,8,32 (B)"]
    buf = io.StringIO()
    write_console(c, buf)
    assert "note: ladder differs: 1,4,8,16 (A) vs 1,4,8,32 (B)" in buf.getvalue()


def test_rate_ladders_match_steps_by_offered_rate():
    a, b = samples.rate_ladder_summary(), samples.rate_ladder_summary()
    b["verdict"].update(safe_rate=4.0)
    c = compare_runs(run(a, "before"), run(b, "after"))
    scopes = [r["scope"] for r in c["rows"][::6]]
    assert scopes[:3] == ["overall", "1 req/s at 16 users", "2 req/s at 16 users"]
    buf = io.StringIO()
    write_console(c, buf)
    assert "safe rate: 2 req/s -> 4 req/s" in buf.getvalue()


def test_closed_open_loop_and_trace_runs_are_noted_as_other_arrivals():
    """A trace replay (whose config.profile stays "default") or an open loop beside a closed run: no note before."""
    closed, open_loop, trace = samples.plain_summary(), samples.plain_summary(), samples.plain_summary()
    open_loop["config"]["arrival"] = {"mode": "poisson", "rate": 10.0}
    trace["config"]["arrival"] = {"mode": "trace", "rate": None,
                                  "trace": {"file": "/data/mooncake.jsonl", "speedup": 2.0, "limit": 40}}  # fmt: skip
    assert compare_runs(run(closed, "a"), run(open_loop, "b"))["notes"] == [
        "arrival differs: closed (A) vs poisson 10 req/s (B)"]  # fmt: skip
    assert compare_runs(run(closed, "a"), run(trace, "b"))["notes"] == [
        "arrival differs: closed (A) vs trace mooncake.jsonl at speedup 2, first 40 (B)"]  # fmt: skip
    again = copy.deepcopy(closed)
    again["config"]["arrival"] = {"mode": "closed"}  # written either way
    assert compare_runs(run(closed, "a"), run(again, "b"))["notes"] == []


def test_rate_ladders_with_other_rates_are_noted_by_their_rates():
    """A rate ladder's levels are its -u cap repeated: other rates at the same cap were not noted at all."""
    a, b = samples.rate_ladder_summary(), samples.rate_ladder_summary()
    b["config"]["ladder"]["rates"] = [2.0, 4.0, 8.0, 16.0]
    c = compare_runs(run(a, "before"), run(b, "after"))
    assert c["notes"] == ["ladder differs: 1,2,4,8 req/s at 16 users (A) vs 2,4,8,16 req/s at 16 users (B)"]


def test_rate_ladders_compare_their_recommended_rates_and_say_steps_matched_by_rate():
    a, b = samples.rate_ladder_summary(), samples.rate_ladder_summary()
    b["verdict"].update(safe_rate=4.0, recommended_rate=4.0)
    c = compare_runs(run(a, "before"), run(b, "after"))
    assert (c["a"]["recommended_rate"], c["b"]["recommended_rate"], c["b"]["rate_ladder"]) == (2.0, 4.0, True)
    buf = io.StringIO()
    write_console(c, buf)
    text = buf.getvalue()
    assert "safe rate: 2 req/s -> 4 req/s; recommended rate limit 2 req/s -> 4 req/s; breached first" in text
    assert text.rstrip().endswith("steps matched by offered rate") and "users;" not in text
    md = io.StringIO()
    write_markdown(c, md)
    assert md.getvalue().rstrip().endswith("steps matched by offered rate.")
    closed = io.StringIO()
    write_console(compare_runs(run(samples.ladder_summary(), "a"), run(after(), "b")), closed)
    closed = closed.getvalue()
    assert closed.rstrip().endswith("steps matched by users") and "recommended limit 4 ->" in closed


def test_ladders_over_sessions_compare_max_sessions_and_the_limit_in_requests_in_flight():
    from llmload.results import to_summary
    from tests.helpers.session_data import session_result

    a = run(to_summary(session_result({1: 50.0, 4: 60.0, 8: 120.0})), "a")
    b = run(to_summary(session_result({1: 50.0, 4: 60.0, 8: 70.0})), "b")
    c = compare_runs(a, b)
    assert c["a"]["sessions"] is True and c["b"]["sessions"] is True
    assert {r["scope"] for r in c["rows"]} == {"overall", "1 session", "4 sessions", "8 sessions"}
    out = io.StringIO()
    write_console(c, out)
    text = out.getvalue()
    assert "\nmax sessions: 4 sessions -> 8 sessions; recommended gateway limit 1 -> 1 requests in flight; " in text
    assert "steps matched by sessions" in text and "users" not in text
    mixed = compare_runs(run(samples.ladder_summary(), "u"), b)  # over users before, over sessions after
    assert "sessions" not in mixed["a"] and "4 users" in {r["scope"] for r in mixed["rows"]}
    out = io.StringIO()
    write_console(mixed, out)
    assert "\nmax sessions: 4 users -> 8 sessions; " in out.getvalue() and "steps matched by users" in out.getvalue()
    old = compare_runs(run(samples.ladder_summary(), "a"), run(after(), "b"))
    assert "sessions" not in old["a"] and "sessions" not in old["b"]  # the JSON of runs over users is as it was
