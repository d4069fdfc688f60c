from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest

from llmload.report.commands import report_main, write_report
from llmload.report.data import REPORT_SCHEMA, build_report, series_points
from llmload.report.html_page import render_html, write_html
from llmload.report.svg import Chart, HRule, Line, nice_ticks, render_chart
from llmload.results import from_summary, to_summary
from llmload.rundir import Run, load_run, write_run_dir
from tests.helpers import samples

SVG = re.compile(r"<svg\b.*?</svg>", re.S)


def run_of(summary, series=None, name="20270115T080000Z-default") -> Run:
    return Run.from_summary(Path("."), name, summary, timeseries=series)


def html_of(summary, series=None) -> str:
    return render_html(build_report(run_of(summary, series)))


def assert_self_contained(html: str) -> None:
    assert not re.search(r"\b(src|href|xlink:href)\s*=", html, re.I)
    for token in ("<script", "<link", "<iframe", "<img", "@import", "url(", "http://", "https://", "//cdn"):
        assert token not in html.lower(), token


def test_full_report_sections_and_numbers():
    html = html_of(samples.ladder_summary(), samples.timeseries())
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    for text in (
        "Safe concurrency: 4 users",
        "TTFT p50 broke the limit at 8 users: 1,200 ms &gt; 75.0 ms (baseline 50.0 ms).",
        "Recommended limit",
        "Diagnosis",
        "Batch / admission cap",
        "Raise --max-num-seqs.",
        "running flat at 4 while waiting grows",
        "Latency and throughput vs concurrency",
        "Ladder steps",
        "Server and GPU over time",
        "Request classes",
        "Run details",
    ):
        assert text in html, text
    # ladder: TTFT, TPOT, tok/s, error rate; over time: queue, KV, GPU
    assert len(SVG.findall(html)) == 7
    assert "limit 75.0 ms" in html and "baseline 50.0 ms" in html and "safe ≤ 4 users" in html
    assert '<span class="tag breach">breach</span>' in html and '<span class="tag safe">safe</span>' in html
    assert_self_contained(html)


@pytest.mark.parametrize(
    ("summary", "series"),
    [
        (samples.ladder_summary(), samples.timeseries()),
        (samples.ladder_summary(verdict=False, findings=False, step_signals=False), None),
        (samples.plain_summary(), None),
        (samples.plain_summary(), samples.timeseries()),
    ],
)
def test_every_svg_is_well_formed_xml(summary, series):
    html = html_of(summary, series)
    for svg in SVG.findall(html):
        root = ET.fromstring(svg)
        assert root.tag == "svg" and root.get("viewBox")
    assert_self_contained(html)


def test_plain_run_shows_table_and_says_how_to_get_a_verdict():
    html = html_of(samples.plain_summary())
    assert "Plain run: 10 users" in html and "--ladder" in html
    assert "Request classes" in html and "overall" in html
    assert "Ladder steps" not in html and "Latency and throughput vs concurrency" not in html
    assert "No engine or GPU metrics were collected" in html
    assert not SVG.findall(html)


def test_plain_run_with_series_draws_them_without_step_marks():
    html = html_of(samples.plain_summary(), samples.timeseries())
    assert len(SVG.findall(html)) == 3
    assert "vertical lines: ladder steps" not in html


def test_ladder_without_verdict_or_findings():
    html = html_of(samples.ladder_summary(verdict=False, findings=False, step_signals=False))
    assert "No verdict" in html and "No finding" not in html
    assert "Ladder steps" in html and len(SVG.findall(html)) == 4
    assert "limit 75.0 ms" not in html


def test_verdict_ok_and_no_baseline():
    s = samples.ladder_summary()
    s["verdict"].update(status="ok", breach=None, safe_step=3, safe_users=16)
    html = html_of(s)
    assert "Safe concurrency: 16 users (the top step)" in html and "No limit was broken up to 16 users" in html
    s["verdict"].update(status="no_baseline", safe_users=None, safe_step=None)
    s["verdict"]["confidence"]["note"] = "the baseline step had no successful request"
    assert "No baseline" in html_of(s)


def test_text_from_the_summary_is_escaped():
    s = samples.ladder_summary()
    s["findings"][0]["title"] = "<script>alert(1)</script>"
    s["classes"]["<b>x</b>"] = s["classes"].pop("short")
    html = html_of(s)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_step_signals_come_from_the_series_when_the_summary_has_none():
    s = samples.ladder_summary(step_signals=False)
    report = build_report(run_of(s, samples.timeseries()))
    assert report["steps"][2]["server"]["waiting"] == pytest.approx(4.2)
    assert report["steps"][0]["gpu"]["utilization"] == pytest.approx(0.30)
    assert build_report(run_of(s))["steps"][0].get("server") is None


def test_report_json_is_the_data_and_round_trips():
    report = build_report(run_of(samples.ladder_summary(), samples.timeseries()))
    assert report["schema"] == REPORT_SCHEMA
    assert [s["status"] for s in report["steps"]] == ["baseline", "safe", "breach", "over"]
    assert report["classes"][2]["safe_users"] == 1 and report["overall"]["error_rate"] == pytest.approx(1 / 120, abs=1e-6)
    assert report["series"]["steps"][1]["start_s"] == 10.0
    assert report["series"]["signals"]["server.waiting"][7] == [14.0, None]
    assert orjson.loads(orjson.dumps(report)) == report


def test_series_points_is_a_plain_mapping_of_pairs():
    pts = series_points(samples.timeseries())
    assert set(pts) == {"server.waiting", "server.running", "server.kv_cache_usage", "gpu.utilization", "gpu.memory_bandwidth_utilization"}
    assert pts["server.running"][0] == (samples.T0, 1.0)
    assert series_points(None) == {}


def test_svg_writer_standalone_gaps_and_ticks():
    chart = Chart(
        title="t & <x>",
        x_label="users",
        y_label="ms",
        lines=[Line("p50", [(0, 1.0), (1, None), (2, 3.0), (3, 4.0)], "#000", markers=True)],
        rules=[HRule(2.0, "limit", "#f00")],
    )
    svg = render_chart(chart)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.find(f"{ns}title").text == "t & <x>"
    assert len([p for p in root.iter(f"{ns}path")]) == 2  # the missing value splits the line
    assert len([c for c in root.iter(f"{ns}circle")]) == 3
    assert "xmlns" not in render_chart(chart, standalone=False)


def test_nice_ticks():
    assert nice_ticks(0, 1238) == [0, 250, 500, 750, 1000, 1250]
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_write_html_to_a_stream():
    buf = io.StringIO()
    write_html(build_report(run_of(samples.plain_summary())), buf)
    assert "<html" in buf.getvalue()


def test_api_key_never_reaches_the_run_dir_or_the_report(tmp_path):
    path = write_run_dir(tmp_path, from_summary(samples.with_secret(samples.ladder_summary())), timeseries=samples.timeseries())
    write_report(load_run(path))
    files = sorted(p.name for p in path.iterdir())
    assert files == sorted(
        ["config.json", "summary.json", "verdict.json", "findings.json", "timeseries.json", "report.html", "report.md", "report.json"]
    )
    for p in path.iterdir():
        assert samples.SECRET not in p.read_text(), p.name


def test_report_command(tmp_path, capsys):
    run = write_run_dir(tmp_path / "runs", from_summary(samples.ladder_summary()))
    assert report_main([str(run)]) == 0
    assert {p.name for p in run.iterdir()} >= {"report.html", "report.md", "report.json"}
    out = tmp_path / "out"
    assert report_main([str(run / "summary.json"), "--out", str(out), "--format", "html"]) == 0
    assert [p.name for p in out.iterdir()] == ["report.html"]
    assert report_main([str(tmp_path / "nope")]) == 2
    assert "no such run directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        report_main([str(run), "--format", "pdf"])


def test_sparse_verdict_and_findings_do_not_break_any_writer():
    from llmload.report.markdown import write_markdown

    s = samples.ladder_summary()
    s["verdict"] = {"status": "insufficient_data", "confidence": None, "limits": None, "breach": None, "p99": None, "per_class": None}
    s["baseline"] = None
    s["findings"] = [{"id": "not_enough_signals"}]
    s["steps"][1].pop("overall")
    s["steps"].insert(0, {**s["steps"][0], "index": -1, "users": 1})  # a --baseline-requests pre-run
    report = build_report(run_of(s, samples.timeseries()))
    html = render_html(report)
    assert "Not enough data" in html and "not_enough_signals" in html
    assert len(SVG.findall(html)) == 7  # the pre-run is in the table, not on the ladder axis
    write_markdown(report, io.StringIO())


def test_a_summary_without_analysis_is_analysed_by_the_report(tmp_path):
    from llmload.report.commands import analysed

    s = samples.ladder_summary()
    for key in ("verdict", "baseline", "findings"):
        del s[key]
    run = run_of(s, samples.timeseries())
    done = analysed(run)
    assert done is not run and run.result.judgement is None  # the stored run is left alone
    done_summary = to_summary(done.result)
    assert done_summary["verdict"]["safe_users"] == 4 and done_summary["verdict"]["breach"]["metric"] == "ttft_p50"
    assert done_summary["findings"] and "the analysis ran in llmload report" in done_summary["warnings"][-1]
    html = render_html(build_report(done))
    assert "Safe concurrency: 4 users" in html and "the analysis ran in llmload report" in html
    full = run_of(samples.ladder_summary())
    assert analysed(full) is full


def test_evidence_values_of_any_type():
    s = samples.ladder_summary()
    s["findings"][0]["evidence"] = {"flag": True, "missing": None, "text": "vllm", "ratio": 0.25}
    html = html_of(s)
    assert "<b>flag</b>yes" in html and "<b>text</b>vllm" in html and "<b>ratio</b>0.250" in html and "missing" not in html


def test_reasoning_section_only_where_some_request_reasoned():
    report = build_report(run_of(samples.reasoning_summary()))
    rz = report["reasoning"]
    assert [r["name"] for r in rz["rows"]] == ["long", "overall"]  # classes that reasoned, then overall
    assert rz["rows"][0]["ttfo_p50"] == 420.0 and rz["rows"][0]["reasoning_p50"] == 120.0
    assert (rz["tokens"], rz["from_usage"], rz["counted"], rz["hidden"]) == (2400, 40, 0, 2)
    html = render_html(report)
    assert "<h2>Reasoning</h2>" in html and "TTFO p50" in html and "Hidden reasoning in 2 requests" in html
    assert "7 events carried more than one token" in html
    plain = html_of(samples.plain_summary())
    assert build_report(run_of(samples.plain_summary()))["reasoning"] is None
    assert "Reasoning" not in plain and "TTFO" not in plain and "buffered token jumps" not in plain


def test_phase_bars_stack_each_steps_p99_ttft_by_its_tail_shares():
    from llmload.report.charts import ladder_charts

    steps = [
        {"index": 0, "users": 1, "ttft_p50": 50, "phases_p99_ms": None},
        {"index": 1, "users": 8, "ttft_p50": 400,
         "phases_p99_ms": {"gateway": 10.0, "server_queue": 780.0, "prefill": 150.0, "other": 0.0}},
    ]  # fmt: skip
    figures = dict(ladder_charts({"steps": steps}))
    chart = figures["Where the p99 TTFT went, per step (mean shares of the requests at or above it)"]
    (bar,) = chart.bars
    assert bar.x == 1 and bar.total == 940.0
    svg = render_chart(chart)
    ET.fromstring(svg)
    heights = [float(h) for h in re.findall(r'<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)" fill="#', svg)][1:]
    assert len(heights) == 3  # after the background: gateway, queue, prefill ("other" is 0 and not drawn)
    assert heights[1] / heights[2] == pytest.approx(780 / 150, rel=0.02)
    without = [caption for caption, _ in ladder_charts({"steps": steps[:1]})]
    assert not any("p99 TTFT went" in c for c in without)  # no phase chart without server timing


def test_report_shows_grades_goodput_attainment_and_tok_s_per_gpu():
    from llmload.results import to_summary
    from tests.helpers.samples import slo_result

    result = slo_result(gpus=2)
    report = build_report(run_of(to_summary(result)))
    fast, slow = report["classes"]
    assert (fast["ttft_grade"], slow["ttft_grade"]) == ("excellent", "pass")
    assert (fast["attainment"], slow["attainment"], report["overall"]["attainment"]) == (1.0, 0.75, 0.875)
    assert report["overall"]["good_requests"] == 70 and report["steps"][1]["attainment"] == 0.75
    assert report["run"]["gpus"] == 2
    assert report["run"]["tok_s_per_gpu"] == round(result.overall.output_tokens_per_s / 2, 3)
    html = render_html(report)
    assert "<th>TTFT grade</th>" in html and '<td class="grade excellent">excellent</td>' in html
    assert "<th>SLO attainment</th>" in html and "87.5 %" in html and "75.0 %" in html
    assert "<dt>output tok/s per GPU</dt>" in html
    assert "target 99.0 %: attainment &gt;= target up to 1 user; first failed: ttft_ms at 4 users" in html
    plain = build_report(run_of(samples.ladder_summary()))
    assert "attainment" not in plain["overall"] and plain["run"]["gpus"] is None
    assert "SLO attainment" not in render_html(plain)
def test_a_rate_ladder_report_heads_with_its_safe_rate_and_charts_rates():
    html = html_of(samples.rate_ladder_summary(), samples.timeseries())
    assert "Safe rate: 2 req/s" in html and "TTFT p50 broke the limit at 4 req/s" in html
    assert "offered rate, req/s (rate ladder step)" in html
    assert_self_contained(html)


def test_a_rate_ladder_report_names_its_steps_and_ladder_by_rate_not_by_the_cap():
    """Every step of a rate ladder runs at the same -u cap: "16 users" on each row said nothing."""
    html = html_of(samples.rate_ladder_summary(), samples.timeseries())
    steps = html[html.index("<h2>Ladder steps</h2>"):]
    steps = steps[: steps.index("</table>")]
    assert "<td>1 req/s" in steps and "<td>8 req/s" in steps and "16 users" not in steps
    assert "<dd>1, 2, 4, 8 req/s at 16 users; 10.0 s per step, 2.00 s warm-up</dd>" in html
    assert "Safe rate</" in html and "Safe concurrency</" not in html and "band 16–16 users" not in html
    assert "step of 1 req/s" in html and "step of 16 users" not in html


def _rate_ladder_with_slo_band_and_classes():
    s = samples.rate_ladder_summary()
    v = s["verdict"]
    v["confidence"]["band_steps"] = [0, 1]
    v["per_class"]["short"]["safe_step"] = 1
    v["slo"] = {"target": 0.99, "slos": {"short": {"ttft_ms": 500.0}},
                "overall": {"status": "breach", "attainment": 1.0, "safe_step": 1, "safe_users": 16, "failed_step": 2,
                            "failed_users": 16, "failed_attainment": 0.6, "failed_slo": "ttft_ms"}, "per_class": {}}  # fmt: skip
    return s


def test_a_rate_ladder_report_words_its_limit_band_findings_classes_and_slos_in_rates():
    """The cards, the diagnosis, the class table and the SLO line said 16 users (the -u cap every step shares)."""
    html = html_of(_rate_ladder_with_slo_band_and_classes(), samples.timeseries())
    cards = html[html.index('<div class="cards">') : html.index("</section>")]
    limit = '<div class="k">Recommended limit</div><div class="v">2 req/s</div><div class="d">gateway rate limit</div>'
    assert limit in cards
    assert "offered, at the -u cap of 16 users; band 1–2 req/s" in cards and "gateway max concurrency" not in cards
    diagnosis = html[html.index("<h2>Diagnosis</h2>") :]
    assert "engine scheduler · from 4 req/s" in diagnosis and "from 16 users" not in diagnosis
    classes = html[html.index("<h2>Request classes</h2>") :]
    classes = classes[: classes.index("</table>")]
    assert "<th>safe rate</th>" in classes and "<th>safe users</th>" not in classes
    assert "<td>2 req/s</td>" in classes  # short: its per-class safe step (index 1); overall: the verdict's safe rate
    assert "<dd>target 99.0 %: attainment &gt;= target up to 2 req/s; first failed: ttft_ms at 4 req/s" in html
    assert '<div class="v">16 users' not in cards and "16 users" not in classes  # the cap is named as the cap only
    assert '<div class="k">Safe on p99</div><div class="v">2 req/s</div>' in cards


def test_a_concurrency_ladder_report_keeps_its_users_wording():
    s = samples.ladder_summary()
    s["verdict"]["per_class"]["short"]["safe_step"] = 1
    s["verdict"]["slo"] = {"target": 0.99, "slos": {}, "per_class": {},
                           "overall": {"status": "breach", "safe_step": 1, "safe_users": 4, "failed_step": 2,
                                       "failed_users": 8, "failed_slo": "ttft_ms"}}  # fmt: skip
    html = html_of(s, samples.timeseries())
    assert '<div class="v">4 users</div><div class="d">gateway max concurrency</div>' in html
    assert "engine scheduler · from 8 users" in html and "<th>safe users</th>" in html
    assert "attainment &gt;= target up to 4 users; first failed: ttft_ms at 8 users" in html
    assert "<h2>Arrivals</h2>" not in html and "<h2>Arrivals</h2>" not in html_of(samples.plain_summary())


def _arrivals(html: str) -> str:
    start = html.index("<h2>Arrivals</h2>")
    return html[start : html.index("</section>", start)]


def test_an_open_loop_report_has_an_arrivals_section_and_an_open_loop_headline():
    html = html_of(samples.open_loop_summary(mode="gamma", waited=240))
    a = _arrivals(html)
    for text in ("<dt>process</dt><dd>gamma, burstiness 0.25", "<dt>offered</dt><dd>30 req/s</dd>",
                 "<dt>achieved</dt><dd>29.4 req/s (98.0 % of offered), whole run</dd>",
                 "<dd>1,200 sent; 240 (20.0 %) of the sent found all 10 users (the -u cap) busy and waited in the client</dd>",
                 "<dt>client wait</dt><dd>p50 0.0900 ms, p99 45.0 ms</dd>", "<dt>send lag</dt><dd>p50 0.0800 ms, p99 0.900 ms</dd>",
                 "queues for a free slot under the -u cap", "the -u cap, not the server, held them back; raise -u"):  # fmt: skip
        assert text in a, text
    assert "<dt>trace</dt>" not in a
    assert "Open-loop run: gamma at 30 req/s for 40.0 s (-u cap 10)" in html and "Plain run" not in html
    assert "Here the client kept the schedule" in _arrivals(html_of(samples.open_loop_summary()))
    late = _arrivals(html_of(samples.open_loop_summary(lag_p99=14.0)))
    assert "The generator fell behind its schedule (send lag p99 14.0 ms &gt; 10 ms)" in late
    assert_self_contained(html)


def test_the_arrivals_section_says_how_many_were_still_queued_at_the_end():
    a = _arrivals(html_of(samples.open_loop_summary(waited=80, unsent=416)))
    assert ("<dd>1,200 due, 784 sent, 416 still queued in the client at the end (never sent, in no count or latency; "
            "the longest waited 8,357 ms); 80 (10.2 %) of the sent found all 10 users") in a, a  # fmt: skip
    assert "Here 41.3 % of arrivals waited for a free user (416 of them never sent): the -u cap" in a
    t = _arrivals(html_of(samples.open_loop_summary(trace=True, unsent=46)))
    assert "<dt>sent</dt><dd>1,154 of 1,500 entries (46 due but still waiting for a free user at the end" in t


def test_a_trace_replay_report_shows_its_trace_and_a_rate_ladder_its_rates():
    html = html_of(samples.open_loop_summary(trace=True))
    a = _arrivals(html)
    assert "<dt>process</dt><dd>trace replay" in a
    assert "<dd>mooncake.jsonl: 1,500 entries at speedup 2, span 75.0 s</dd>" in a
    assert "<dt>sent</dt><dd>1,200 of 1,500 entries (the run ended first" in a
    assert "<dt>block reuse</dt><dd>43.2 % of hash_ids blocks" in a and "/data/traces" not in a
    assert "Trace replay: mooncake.jsonl for 40.0 s, achieved 29.4 req/s" in html
    rates = _arrivals(html_of(samples.rate_ladder_summary()))
    assert "<dt>offered</dt><dd>1, 2, 4, 8 req/s, one per rate-ladder step" in rates


def test_an_inconclusive_rate_ladder_heads_with_a_safe_rate_verdict():
    s = samples.rate_ladder_summary()
    s["verdict"].update(status="inconclusive", note="inconclusive: too few requests: long: 3 requests at 2 req/s")
    html = html_of(s)
    assert "Inconclusive: too little evidence for a safe-rate verdict" in html and "safe-concurrency" not in html
    closed = samples.ladder_summary()
    closed["verdict"].update(status="inconclusive", note="inconclusive: few")
    assert "Inconclusive: too little evidence for a safe-concurrency verdict" in html_of(closed)


def test_a_ladder_over_sessions_labels_its_safe_step_card_and_its_top_in_sessions():
    from tests.helpers.session_data import session_result

    html = render_html(build_report(Run.from_summary(Path("."), "20270115T080000Z-agent",
                                                     to_summary(session_result({1: 50.0, 4: 60.0, 8: 120.0})))))  # fmt: skip
    assert '<div class="k">Safe sessions</div><div class="v">4 sessions</div>' in html
    assert "<span>up to 8 sessions</span>" in html and "Safe concurrency" not in html
    assert '<div class="k">Recommended limit</div><div class="v">1 in flight</div>' in html
    plain = html_of(samples.ladder_summary())
    assert '<div class="k">Safe concurrency</div>' in plain and "Safe sessions" not in plain
