"""The load-process role: its users' context, finished records to listeners and Locust, reports."""

from __future__ import annotations

from llmload.adapters.base import Framing
from llmload.config import RunConfig, read
from llmload.errors import RequestFailed
from llmload.ladder import StepTracker
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet
from llmload.runtime.load_role import WORKER_STRIDE, LoadProcess
from tests.helpers.runtime import FakeLocal, FakeWorker, environment

MS = 1_000_000


class Monitor:
    def __init__(self) -> None:
        self.samples = 0

    def sample(self):
        self.samples += 1
        return 0.25, 0.002

    def start(self) -> None: ...

    def stop(self) -> None: ...


def load(env, worker_index=lambda: None, **flags):
    steps = StepTracker()
    lp = LoadProcess(env, steps, user_count=lambda: env.runner.user_count, worker_index=worker_index, monitor=Monitor())
    lp.configure(RunConfig.from_values({**read(env.parsed_options), **flags}))
    return lp, steps


def finished(outcome="ok", kind=None, n=4):
    r = RequestRecord("short", input_tokens=10, max_tokens=n)
    r.start_ns = 1000 * MS
    r.chunk_ns = [r.start_ns + (50 + 5 * i) * MS for i in range(n)]
    r.end_ns = (r.chunk_ns[-1] if n else r.start_ns) + MS
    settle_token_counts(r, None, None)
    r.outcome, r.error_kind, r.error_message = outcome, kind, "boom" if kind else None
    return r


def test_the_context_users_read():
    env = environment(FakeLocal(), "--api-key", "sk-x", "--stream-format", "ndjson", "--stall-timeout", "5s")
    lp, steps = load(env)
    assert lp.adapter.name == "openai-chat" and lp.sse_parser == "fast"
    assert lp.watchdog.limits.stall == 5.0
    spec = lp.adapter.build_request(lp.new_sampler().next())
    assert lp.headers_for(spec)["Authorization"] == "Bearer sk-x"
    assert lp.framing_for("text/event-stream") is Framing.NDJSON  # --stream-format wins over the content type
    steps.on_message({"i": 3, "steady": True})
    assert lp.steady_step == 3


def test_user_indices_are_unique_across_workers():
    a, _ = load(environment(FakeWorker(worker_index=0)), worker_index=lambda: 0)
    b, _ = load(environment(FakeWorker(worker_index=1)), worker_index=lambda: 1)
    samplers = (a.new_sampler(), a.new_sampler(), b.new_sampler(), b.new_sampler())
    assert [s.user_index for s in samplers] == [0, WORKER_STRIDE, 1, WORKER_STRIDE + 1]
    assert len({s.next().prompt for s in samplers}) == 4  # each user its own prompts from the one seed


def _finish_all(lp, env, records):
    mine, locust = [], []
    env.events.llmload_request.add_listener(lambda record, environment, **_: mine.append((record, environment)))
    env.events.request.add_listener(lambda **kw: locust.append(kw))
    for r in records:
        lp.finish(r)
    return mine, locust


def test_finish_goes_to_llmloads_listeners_then_to_locusts_statistics_once_per_request():
    env = environment(FakeLocal())
    lp, _ = load(env)
    ok, err, cut = finished(), finished("error", "http_503", n=0), finished("interrupted")
    mine, locust = _finish_all(lp, env, (ok, err, cut))
    assert [r for r, _ in mine] == [ok, err, cut] and all(e is env for _, e in mine)
    # One Locust entry per finished request (the interrupted one is not finished): its RPS is the request rate.
    assert [(k["request_type"], k["name"]) for k in locust] == [("E2E", "short"), ("E2E", "short")]
    assert locust[0]["response_time"] == 66.0 and locust[0]["response_length"] == 4 and locust[0]["exception"] is None
    assert isinstance(locust[1]["exception"], RequestFailed) and str(locust[1]["exception"]) == "http_503: boom"
    assert locust[1]["response_length"] == 0


def test_locust_ttft_rows_add_a_ttft_entry_per_success():
    env = environment(FakeLocal(), "--locust-ttft-rows")
    lp, _ = load(env)
    assert lp.config.locust_ttft_rows is True
    _, locust = _finish_all(lp, env, (finished(), finished("error", "http_503", n=0), finished("interrupted")))
    assert [(k["request_type"], k["name"]) for k in locust] == [("E2E", "short"), ("TTFT", "short"), ("E2E", "short")]
    assert locust[1]["response_time"] == 50.0 and locust[1]["response_length"] == 0 and locust[1]["exception"] is None


def test_locusts_statistics_count_each_request_once():
    """Locust's own RequestStats over the events: requests, failures and the failure ratio are llmload's."""
    from locust.stats import RequestStats

    env = environment(FakeLocal())
    lp, _ = load(env)
    stats = RequestStats()

    def on_request(request_type, name, response_time, response_length, exception=None, **_):  # as Locust's runner does
        stats.log_request(request_type, name, response_time, response_length)
        if exception is not None:
            stats.log_error(request_type, name, exception)

    env.events.request.add_listener(on_request)
    records = [finished() for _ in range(6)] + [finished("error", "http_500", n=0) for _ in range(2)]
    records += [finished("interrupted")]
    for r in records:
        lp.finish(r)
    assert stats.total.num_requests == 8 and stats.total.num_failures == 2 and stats.total.fail_ratio == 0.25


def test_reports_carry_the_delta_the_steps_and_the_gauges(tmp_path):
    env = environment(FakeLocal(users=7))
    lp, _ = load(env)
    lp.open_dump(str(tmp_path / "rec.jsonl"))
    ok = finished()
    ok.step = 0
    for r in (ok, finished("error", "http_500", n=0)):
        lp.on_record(r)
    report = lp.report(final=True)
    m = MetricSet.from_wire(report["m"]).overall().counters
    assert (m["requests"], m["ok"], m["errors"]) == (2, 1, 1)
    assert MetricSet.from_wire(report["s"]["0"]).overall().counters["ok"] == 1
    assert report["g"]["users"] == 7 and report["g"]["cpu_ratio"] == 0.25 and report["final"] is True
    assert MetricSet.from_wire(lp.report()["m"]).empty  # a delta: drained
    assert len((tmp_path / "rec.jsonl").read_text().splitlines()) == 2  # the dump is flushed with each report
    lp.stop()
    assert lp.dump is None


def test_a_workers_dump_has_its_own_file(tmp_path):
    lp, _ = load(environment(FakeWorker(worker_index=2)), worker_index=lambda: 2)
    lp.open_dump(str(tmp_path / "rec.jsonl"))
    assert lp.dump.path.name == "rec.worker2.jsonl"
    lp.stop()


def test_reconfiguring_replaces_the_watchdog_and_stops_the_old_one():
    env = environment(FakeLocal())
    lp, _ = load(env)
    old = lp.watchdog
    lp.configure(RunConfig.from_values({**read(env.parsed_options), "ttft_timeout": "1s"}))
    assert lp.watchdog is not old and lp.watchdog.limits.ttft == 1.0 and old._timer is None


def test_a_warmup_request_reaches_the_listeners_and_the_dump_but_no_statistic_of_the_run(tmp_path):
    env = environment(FakeLocal(users=2), "--warmup-requests", "1")
    lp, _ = load(env)
    lp.on_test_start()  # the gate: this process's share of --warmup-requests (standalone: all 1)
    lp.open_dump(str(tmp_path / "rec.jsonl"))
    cold, warm = finished("error", "http_503", n=0), finished()
    cold.warmup = lp.starts_in_warmup(cold.start_ns)
    warm.warmup = lp.starts_in_warmup(warm.start_ns)
    assert (cold.warmup, warm.warmup) == (True, False)
    env.events.llmload_request.add_listener(lambda record, **_: lp.on_record(record))
    lp.backed_off(cold, 0.5)  # a warm-up request's backoff counts nowhere either
    mine, locust = _finish_all(lp, env, (cold, warm))
    assert [r for r, _ in mine] == [cold, warm]  # llmload's listeners (the dump, user listeners) see both
    assert len(locust) == 1 and locust[0]["exception"] is None  # Locust's statistics: the measured one only
    report = lp.report(final=True)
    m = MetricSet.from_wire(report["m"]).overall().counters
    assert (m["requests"], m["ok"], m["errors"], m["backoffs"]) == (1, 1, 0, 0)
    assert report["w"]["w"]["c"]["outcomes"]["c"]["errors"] == 1  # in the warm-up's own statistics
    lines = (tmp_path / "rec.jsonl").read_text().splitlines()
    assert len(lines) == 2 and '"warmup":true' in lines[0] and "warmup" not in lines[1]
    lp.stop()


def test_a_json_answer_is_read_whole_only_by_a_whole_body_adapter():
    chat, _ = load(environment(FakeLocal()))
    assert chat.framing_for("application/json") is None  # a chat answer must stream: wrong_content_type
    embed, _ = load(environment(FakeLocal(), "--api", "openai-embeddings", "--inputs-per-request", "4"))
    assert embed.framing_for("application/json") is Framing.RAW
    assert embed.adapter.build_request(embed.new_sampler().next()).inputs == 4
