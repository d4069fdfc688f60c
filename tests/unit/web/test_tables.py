"""The LLM tabs: a real Locust ``Environment`` + ``WebUI`` in-process, read with Flask's test client."""

from __future__ import annotations

import json

import pytest

from llmload.config import add_arguments
from llmload.metrics.aggregation import WINDOW_S, WorkerGauges
from llmload.metrics.definitions import settle_reasoning, settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.plugin import install
from llmload.runtime import Runtime
from llmload.web.tables import LIVE_COLUMNS, LIVE_TAB, RUN_COLUMNS, RUN_TAB, install_web_ui
from tests.helpers.clock import FakeClock
from tests.helpers.web_env import local_web_env

MS = 1_000_000


def finished(cls, outcome="ok", kind=None, n=5, ttft_ms=50, itl_ms=5):
    r = RequestRecord(cls, input_tokens=10, max_tokens=n)
    r.start_ns = 1_000 * MS
    r.chunk_ns = [r.start_ns + (ttft_ms + i * itl_ms) * MS for i in range(n)]
    r.end_ns = r.chunk_ns[-1] + MS if n else r.start_ns + MS
    settle_token_counts(r, None, None)
    r.outcome, r.error_kind = outcome, kind
    return r


def make_env(web_base_path=None, web_ui_first=True):
    env = local_web_env(web_base_path=web_base_path, web_ui=web_ui_first)  # as locust.main: the web UI exists at init
    clock = FakeClock()
    runtime = install(env, Runtime(env, clock=clock))
    return env, runtime, clock


@pytest.fixture
def web(monkeypatch):
    # Locust's web UI parses sys.argv for the start form's extra options: not pytest's.
    monkeypatch.setattr("sys.argv", ["locust"])
    monkeypatch.setenv("LLMLOAD_NO_EXPORTER", "true")  # no Prometheus listener on a fixed port here
    made = []

    def make(**kw):
        env, runtime, clock = make_env(**kw)
        made.append((env, runtime))
        return env, runtime, clock

    yield make
    for env, runtime in made:
        runtime.on_quitting()
        ui = env.web_ui
        if ui is not None and ui.server is not None:
            ui.stop()
        elif ui is not None and ui.greenlet is not None:
            ui.greenlet.kill(block=False)  # never got to bind: the test only used the test client
        env.runner.quit()


def feed(env, runtime, records, **gauges):
    """Records through the real listener, then one report into the aggregator (the pump's job)."""
    for r in records:
        env.events.llmload_request.fire(record=r, environment=env)
    runtime.coordinator.merge("local", {"m": runtime.load.recorder.drain(), "g": WorkerGauges(**gauges).to_wire()})


def rows_by_name(rows):
    return {r["class"]: r for r in rows}


def extended(client):
    body = client.get("/stats/requests").get_json()
    return body, {e["key"]: e["data"] for e in body["extended_stats"]}


def test_tabs_and_tables_are_declared_and_rendered_into_the_page(web):
    env, _, _ = web()
    ta = env.web_ui.template_args
    assert [t["key"] for t in ta["extended_tabs"]] == [LIVE_TAB, RUN_TAB]
    tables = {t["key"]: [c["key"] for c in t["structure"]] for t in ta["extended_tables"]}
    assert tables == {LIVE_TAB: [k for k, _ in LIVE_COLUMNS], RUN_TAB: [k for k, _ in RUN_COLUMNS]}
    page = env.web_ui.app.test_client().get("/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert '"extended_tabs"' in html and "Class (last 30 s)" in html and "llmload/live" in html


def test_rows_per_class_and_overall_from_the_live_window(web):
    env, runtime, clock = web()
    env.events.test_start.fire(environment=env)  # new run: the aggregator's run view starts at clock.t
    clock.t += 10.0
    feed(
        env,
        runtime,
        [finished("short", ttft_ms=50, itl_ms=5) for _ in range(8)]
        + [finished("long", ttft_ms=200, itl_ms=20, n=21) for _ in range(2)]
        + [finished("short", "error", "http_429", n=0)] * 2
        + [finished("long", "error", "stall_timeout", n=3)],
        users=4,
        in_flight=3,
        in_flight_by_class={"short": 1, "long": 2},
    )
    body, ext = extended(env.web_ui.app.test_client())
    assert "stats" in body and "state" in body  # Locust's own answer is untouched
    live = ext[LIVE_TAB]
    assert [r["class"] for r in live] == ["short", "medium", "long", "Overall"]  # profile order, Overall last
    rows = rows_by_name(live)
    short, long_, medium, overall = rows["short"], rows["long"], rows["medium"], rows["Overall"]
    assert short["ttft_p50_ms"] == pytest.approx(50, rel=0.01) and short["ttft_p99_ms"] == pytest.approx(50, rel=0.01)
    assert short["itl_p50_ms"] == pytest.approx(5, rel=0.01) and short["tpot_p99_ms"] == pytest.approx(5, rel=0.01)
    assert long_["ttft_p50_ms"] == pytest.approx(200, rel=0.01) and long_["itl_p99_ms"] == pytest.approx(20, rel=0.01)
    assert overall["ttft_p50_ms"] == pytest.approx(50, rel=0.01)
    assert overall["ttft_p99_ms"] == pytest.approx(200, rel=0.01)
    # rates over the 10 s the window covers; tokens of successful requests only
    assert short["requests_per_s"] == pytest.approx(0.8) and short["output_tokens_per_s"] == pytest.approx(4.0)
    assert short["errors_per_s"] == pytest.approx(0.2) and overall["errors_per_s"] == pytest.approx(0.3)
    assert overall["output_tokens_per_s"] == pytest.approx((8 * 5 + 2 * 21) / 10, abs=0.01)
    assert (short["in_flight"], long_["in_flight"], medium["in_flight"], overall["in_flight"]) == (1, 2, 0, 3)
    assert short["errors_by_kind"] == "http_429: 2" and long_["errors_by_kind"] == "stall_timeout: 1"
    assert overall["errors_by_kind"] == "http_429: 2, stall_timeout: 1" and medium["errors_by_kind"] == ""
    assert medium["ttft_p50_ms"] is None and medium["requests_per_s"] == 0
    assert {r["client_saturated"] for r in live} == {"no"}
    run = rows_by_name(ext[RUN_TAB])
    assert (run["Overall"]["requests"], run["Overall"]["ok"], run["Overall"]["errors"]) == (13, 10, 3)
    assert run["long"]["e2e_p50_ms"] == pytest.approx(200 + 20 * 20 + 1, rel=0.01)
    assert run["Overall"]["output_tokens_per_s"] > 0


def test_ttfo_cells_only_where_some_request_reasoned(web):
    env, runtime, clock = web()
    env.events.test_start.fire(environment=env)
    clock.t += 10.0
    thinking = []
    for _ in range(4):  # 10 events, the first 6 reasoning: TTFO = 50 + 6 x 5 ms; usage says 6
        r = finished("long", n=10)
        settle_reasoning(r, 6, 6, 0, 6)
        thinking.append(r)
    plain = [finished("short") for _ in range(3)]
    for r in plain:
        settle_reasoning(r, -1, 0, 0, None)
    feed(env, runtime, thinking + plain, users=2)
    _, ext = extended(env.web_ui.app.test_client())
    live, run = rows_by_name(ext[LIVE_TAB]), rows_by_name(ext[RUN_TAB])
    assert live["long"]["ttfo_p50_ms"] == pytest.approx(80, rel=0.01) and live["long"]["ttft_p50_ms"] == pytest.approx(50, rel=0.01)
    assert live["Overall"]["ttfo_p99_ms"] == pytest.approx(80, rel=0.01)
    assert live["short"]["ttfo_p50_ms"] is None and live["medium"]["ttfo_p99_ms"] is None  # nothing reasoned there
    assert run["long"]["ttfo_p50_ms"] == pytest.approx(80, rel=0.01) and run["long"]["reasoning_tokens_mean"] == 6.0
    assert run["short"]["ttfo_p50_ms"] is None and run["short"]["reasoning_tokens_mean"] is None


def test_live_window_forgets_what_the_run_keeps(web):
    env, runtime, clock = web()
    env.events.test_start.fire(environment=env)
    clock.t += 5.0
    feed(env, runtime, [finished("short", ttft_ms=50)])
    clock.t += WINDOW_S + 1
    feed(env, runtime, [finished("short", ttft_ms=300)])
    _, ext = extended(env.web_ui.app.test_client())
    live, run = rows_by_name(ext[LIVE_TAB])["short"], rows_by_name(ext[RUN_TAB])["short"]
    assert live["ttft_p50_ms"] == pytest.approx(300, rel=0.01)  # the 50 ms request left the window
    assert live["requests_per_s"] == pytest.approx(1 / WINDOW_S, abs=0.01)
    assert run["requests"] == 2 and run["ttft_p50_ms"] == pytest.approx(50, rel=0.01)


def test_memoized_stats_still_carry_fresh_rows(web):
    """/stats/requests is cached for 2 s by Locust; our rows must not be."""
    env, runtime, clock = web()
    client = env.web_ui.app.test_client()
    env.events.test_start.fire(environment=env)
    clock.t += 1.0
    feed(env, runtime, [finished("short")])
    _, first = extended(client)
    feed(env, runtime, [finished("short")] * 3)
    _, second = extended(client)  # within Locust's cache time: its part is the cached one
    assert rows_by_name(first[RUN_TAB])["short"]["requests"] == 1
    assert rows_by_name(second[RUN_TAB])["short"]["requests"] == 4


def test_json_route_serves_the_same_rows_and_the_saturation_flag(web):
    env, runtime, clock = web()
    client = env.web_ui.app.test_client()
    env.events.test_start.fire(environment=env)
    clock.t += 3.0
    feed(env, runtime, [], cpu_ratio=0.97, users=1)  # saturated twice in a row: a verdict for the run
    feed(env, runtime, [finished("medium")], cpu_ratio=0.97, users=1, in_flight=1, in_flight_by_class={"medium": 1})
    live = client.get("/llmload/live")
    assert live.status_code == 200 and live.mimetype == "application/json"
    data = json.loads(live.get_data())
    assert data["schema"] == "llmload.live/1" and data["window_s"] == pytest.approx(3.0)
    assert data["client_saturated"] is True and data["client_saturated_in_run"] is True
    assert "measure the client" in data["note"]
    assert data["workers"][0]["id"] == "local" and data["workers"][0]["saturated"] is True
    overall = rows_by_name(data["live"])["Overall"]
    assert overall["client_saturated"].startswith("YES") and "measure the client" in overall["client_saturated"]
    assert rows_by_name(data["live"])["medium"]["client_saturated"] == "yes"
    _, ext = extended(client)
    assert ext[LIVE_TAB] == data["live"]
    no_rate = lambda rows: [{k: v for k, v in r.items() if k != "output_tokens_per_s"} for r in rows]  # noqa: E731
    assert no_rate(ext[RUN_TAB]) == no_rate(data["run"])  # the run's rate moves with the wall clock
    # saturated now → no longer; the run remembers it was
    feed(env, runtime, [], cpu_ratio=0.1)
    data = client.get("/llmload/live").get_json()
    assert data["client_saturated"] is False and data["note"] is None
    assert rows_by_name(data["live"])["Overall"]["client_saturated"] == "no"
    assert rows_by_name(data["run"])["Overall"]["client_saturated"].startswith("YES")


def test_before_any_test_the_rows_are_empty_not_broken(web):
    env, _, _ = web()
    _, ext = extended(env.web_ui.app.test_client())
    overall = rows_by_name(ext[LIVE_TAB])["Overall"]
    assert overall["ttft_p50_ms"] is None and overall["in_flight"] == 0 and overall["errors_by_kind"] == ""
    assert rows_by_name(ext[RUN_TAB])["Overall"]["requests"] == 0


def test_web_base_path_is_honoured(web):
    env, _, _ = web(web_base_path="/base")
    client = env.web_ui.app.test_client()
    assert client.get("/base/llmload/live").status_code == 200
    assert client.get("/llmload/live").status_code == 404
    assert [e["key"] for e in client.get("/base/stats/requests").get_json()["extended_stats"]] == [LIVE_TAB, RUN_TAB]


def test_no_web_ui_means_nothing_and_a_late_web_ui_can_be_installed(web):
    env, runtime, _ = web(web_ui_first=False)
    assert env.web_ui is None
    assert install_web_ui(env, runtime.coordinator.views) is False
    env.create_web_ui("127.0.0.1", 0)
    assert install_web_ui(env, runtime.coordinator.views) is True
    assert install_web_ui(env, runtime.coordinator.views) is True  # twice: no duplicate tabs, no duplicate route
    assert [t["key"] for t in env.web_ui.template_args["extended_tabs"]] == [LIVE_TAB, RUN_TAB]
    assert env.web_ui.app.test_client().get("/llmload/live").status_code == 200


def test_other_extensions_entries_are_kept(web):
    env, runtime, _ = web(web_ui_first=False)
    env.create_web_ui("127.0.0.1", 0)
    env.web_ui.template_args["extended_tabs"] = [{"title": "Mine", "key": "mine"}]
    install_web_ui(env, runtime.coordinator.views)
    assert [t["key"] for t in env.web_ui.template_args["extended_tabs"]] == ["mine", LIVE_TAB, RUN_TAB]


def test_the_start_form_offers_the_arrival_mode_and_rate_and_the_llm_tab_shows_offered_achieved_and_wait(web):
    from locust import events as locust_events
    from locust.argument_parser import ui_extra_args_dict

    listener = lambda parser, **_: add_arguments(parser)  # noqa: E731 (what activate() registers)
    locust_events.init_command_line_parser.add_listener(listener)
    try:
        options = ui_extra_args_dict(["--host", "http://127.0.0.1:9"])  # the start form's extra fields
    finally:
        locust_events.init_command_line_parser.remove_listener(listener)
    assert options["arrival"]["default_value"] == "closed"
    assert set(options["arrival"]["choices"]) == {"closed", "constant", "poisson", "gamma"}
    assert "rate" in options and "rate_ladder" in options and "burstiness" in options
    env, runtime, clock = web()
    client = env.web_ui.app.test_client()
    closed = rows_by_name(client.get("/llmload/live").get_json()["live"])["Overall"]
    assert closed["offered_per_s"] is None and closed["client_wait_p50_ms"] is None  # a closed loop: blank
    # The form's values arrive in parsed_options; the test start reads them.
    env.parsed_options.arrival, env.parsed_options.rate = "poisson", "4"
    runtime.on_test_start()
    try:
        assert runtime.load.open_loop
        records = [finished("short") for _ in range(8)]
        for i, r in enumerate(records):
            r.intended_ns = r.start_ns - (i + 1) * 10_000_000  # waited 10..80 ms
        clock.t += 5.0  # reported 5 s into the test: the window's rates are over those 5 s
        feed(env, runtime, records)
        data = client.get("/llmload/live").get_json()
        assert data["offered_rate"] == 4.0
        overall = rows_by_name(data["live"])["Overall"]
        assert overall["offered_per_s"] == 4.0
        assert overall["started_per_s"] == round(8 / data["window_s"], 2) and 39 <= overall["client_wait_p50_ms"] <= 41
    finally:
        runtime.on_test_stopping()


def test_the_live_offered_rate_is_rounded_like_the_offered_column(web):
    env, runtime, _ = web()
    client = env.web_ui.app.test_client()
    env.parsed_options.arrival, env.parsed_options.rate = "constant", "1.9047619047619047"  # a trace's 40/21 req/s
    runtime.on_test_start()
    try:
        data = client.get("/llmload/live").get_json()
        assert data["offered_rate"] == 1.905 == rows_by_name(data["live"])["Overall"]["offered_per_s"]
    finally:
        runtime.on_test_stopping()
