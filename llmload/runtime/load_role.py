"""The load-process role (standalone or ``--worker``): what users need, and what they measured.

:class:`LoadProcess` is the :class:`~llmload.users.context.LoadContext` of this process's
users: the workload sampler factory, the endpoint adapter, the deadline watchdog, the step
key (from the shared :class:`~llmload.ladder.tracker.StepTracker`), headers and framing.
It records every finished request (:class:`~llmload.metrics.recorder.Recorder`, and the
``--records-jsonl`` dump), watches its own CPU and event loop, and every report interval
turns that into a report (:meth:`report`) for the aggregator: a worker ships it to its
master, a standalone process folds it into its own.

**Open loop** (``--arrival constant|poisson|gamma``): the process owns the run's
:class:`~llmload.arrivals.dispatcher.Dispatcher`, created and started at each test start and
stopped at its stop. Users take its tickets (:meth:`take_ticket`). Which share of the global
arrival sequence this process sends, and the common start, come from ``schedule()``:
``(worker, workers, t0_wall)`` — a standalone process is worker 0 of 1 and starts now; a
worker takes the stride and wall-clock start its master forwarded with the spawn message
(:meth:`llmload.runtime.options.Options.forward_schedule`). The dispatcher's statistics
travel in every report under ``"a"``.

**Trace replay** (``--trace``): the dispatcher releases the trace's times (``timestamp /
speedup``) instead of a drawn process, and :meth:`ticket_sample` turns ticket ``i`` into
entry ``i``'s request (:class:`~llmload.workload.traces.TracePrompts`). A trace with sessions schedules
its single entries and its sessions' first turns; a session's ticket is the whole session
(:class:`~llmload.workload.replay_session.ReplaySession`, replayed by the user that takes it), and stays
open until its last turn ends. When this process's share is all released and every request it started
has finished, its gauges say ``schedule_done``: the coordinator ends the run when every process says so.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from llmload.adapters import api_headers_for, get_adapter_class
from llmload.adapters.base import Adapter, Framing, RequestSpec
from llmload.arrivals.dispatcher import Dispatcher, Ticket
from llmload.arrivals.schedules import RatePlan
from llmload.config import RunConfig
from llmload.config.backoff import BackoffSpec
from llmload.errors import RequestFailed
from llmload.ladder.tracker import StepTracker
from llmload.metrics.aggregation import ReportWire, WorkerGauges
from llmload.metrics.definitions import origin_ns
from llmload.metrics.dump import RecordDump, dump_path
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from llmload.metrics.selfcheck import ProcessMonitor
from llmload.metrics.warmup_window import WarmupRecorder, request_share
from llmload.results.setup import RunSetup
from llmload.runtime.workload import run_workload
from llmload.users.deadlines import Deadlines, Watchdog
from llmload.workload import Profile, WorkloadSampler
from llmload.workload.replay_session import ReplaySession
from llmload.workload.request_types import RequestSample
from llmload.workload.traces import TRACE_CLASS, Trace, TracePrompts

if TYPE_CHECKING:
    from typing import Protocol

    from locust.env import Environment
    from locust.event import EventHook

    class _LlmloadEvents(Protocol):
        """Locust's events as llmload.plugin leaves them: with the ``llmload_request`` hook it adds."""

        llmload_request: EventHook

__all__ = ["WORKER_STRIDE", "LoadProcess"]

#: User index = local index * stride + worker index: unique across fewer than 1009 workers.
WORKER_STRIDE = 1009


class LoadProcess:
    """See the module docstring. ``environment`` is Locust's; its events carry ``llmload_request``."""

    def __init__(
        self,
        environment: Environment,
        steps: StepTracker,
        *,
        user_count: Callable[[], int],
        worker_index: Callable[[], int | None] = lambda: None,
        monitor: ProcessMonitor | None = None,
        schedule: Callable[[], tuple[int, int, float | None] | None] = lambda: (0, 1, None),
        schedule_done: Callable[[], None] = lambda: None,
    ) -> None:
        self._environment = environment
        self._steps = steps
        self._user_count = user_count
        self._worker_index = worker_index  # None: standalone (its dump has no worker suffix)
        self.recorder = Recorder()
        self.warmup = WarmupRecorder()  # --warmup: the gate, the warm-up's own statistics, TTFT by start slice
        self.monitor = monitor or ProcessMonitor()
        self.dump: RecordDump | None = None
        self._user_index = itertools.count()
        self._watchdog: Watchdog | None = None
        # (this process's stride, strides, common start on the wall clock or None = now), or None: no share.
        self._schedule = schedule
        self._schedule_done_hook = schedule_done  # a trace's share is sent and answered: report it now
        steps.listeners.append(self._on_step)
        self.dispatcher: Dispatcher | None = None
        self._trace: Trace | None = None
        self._tickets_open = 0  # tickets taken by users whose request has not finished yet

    # -- configuration -------------------------------------------------------------------
    def configure(self, config: RunConfig) -> None:
        """Adopt ``config`` (at start-up and at each test start): profile, adapter, headers, deadlines."""
        self.config = config
        self.profile: Profile
        self.profile, self._trace = run_workload(config)
        self._trace_prompts = TracePrompts(config.seed) if self._trace is not None else None
        WorkloadSampler(self.profile, seed=config.seed, user_index=0)  # reads datasets now: errors before load
        self.recorder.set_slos(RunSetup.from_run(config, self.profile).slos, config.slo)  # the table the analysis reads
        self._adapter: Adapter = get_adapter_class(config.api)(config.adapter)
        self._headers = api_headers_for(type(self._adapter), config.api_key)  # the adapter's own style; secret
        fmt = config.adapter.stream_format
        self._forced_framing = None if fmt == "auto" else Framing(fmt)
        if self._watchdog is not None:
            self._watchdog.stop()
        self._watchdog = Watchdog(Deadlines(config.ttft_timeout, config.stall_timeout, config.request_timeout))

    # -- the LoadContext of users ----------------------------------------------------------
    @property
    def adapter(self) -> Adapter:
        return self._adapter

    @property
    def watchdog(self) -> Watchdog:
        assert self._watchdog is not None, "LoadProcess.configure() first"
        return self._watchdog

    @property
    def sse_parser(self) -> str:
        return self.config.sse_parser

    @property
    def steady_step(self) -> int | None:
        return self._steps.steady_step

    def starts_in_warmup(self, now_ns: int) -> bool:
        return self.warmup.gate.starts_in_warmup(now_ns)

    @property
    def open_loop(self) -> bool:
        return self.dispatcher is not None

    def take_ticket(self) -> Ticket:
        assert self.dispatcher is not None, "take_ticket() in a closed loop"
        ticket = self.dispatcher.take()
        self._tickets_open += 1
        if self._trace is not None:  # a trace's arrival: from here on the ticket names its entry (records' arrival_index)
            ticket.index = self._trace.arrivals[ticket.index]
        return ticket

    def ticket_sample(self, ticket: Ticket, sampler: WorkloadSampler) -> RequestSample | ReplaySession:
        """The request of ``ticket``: a trace entry's, else one of its class from the user's ``sampler``; a session's
        first turn: the session, which the user replays (its ticket stays open until the session ends)."""
        trace = self._trace
        if self._trace_prompts is None or trace is None:
            return sampler.sample(ticket.class_index)
        turns = trace.sessions.get(ticket.index)
        if turns is None:
            return self._trace_prompts.sample(trace.entries[ticket.index], sampler.rng, self.config.max_tokens_cap)
        self._tickets_open += 1  # the session's own, beside its first turn's: closed by _session_ended
        source = self.config.arrival.trace
        return ReplaySession([trace.entries[i] for i in turns], turns, sampler.rng, TRACE_CLASS, on_end=self._session_ended,
                             speedup=source.speedup if source is not None else 1.0, cap=self.config.max_tokens_cap)  # fmt: skip

    def _session_ended(self) -> None:
        """A replayed session's last turn ended (or the session was cut): its ticket is done."""
        if self._tickets_open:  # 0: a session of an earlier test (web UI), cut after the next one started
            self._tickets_open -= 1
            if not self._tickets_open and self._schedule_done():
                self._schedule_done_hook()

    def new_sampler(self) -> WorkloadSampler:
        """A sampler for the next user of this process.

        The user index is unique across workers: it seeds the user's own RNG (distinct
        prompts everywhere from one run seed) and sets its start offset in the mix.
        """
        index = next(self._user_index) * WORKER_STRIDE + (self._worker_index() or 0)
        return WorkloadSampler(self.profile, seed=self.config.seed, user_index=index, max_tokens_cap=self.config.max_tokens_cap)

    @property
    def error_backoff(self) -> BackoffSpec:
        return self.config.error_backoff

    def headers_for(self, spec: RequestSpec) -> dict[str, str]:
        return {**spec.headers, **self._headers} if self._headers else spec.headers

    def framing_for(self, content_type: str | None) -> Framing | None:
        """``--stream-format`` when forced; else from the Content-Type (none given: the adapter's), None if it is no stream."""
        if self._forced_framing is not None:
            return self._forced_framing
        if not content_type:
            return self._adapter.default_framing
        whole = getattr(self._adapter, "whole_body", False)  # a JSON answer read whole (openai-embeddings)
        return Framing.from_content_type(content_type, self._adapter.default_framing if whole else None)  # type: ignore[arg-type]

    def backed_off(self, rec: RequestRecord, seconds: float) -> None:
        if not rec.warmup:  # a warm-up request counts nowhere
            self.recorder.add_backoff(rec, seconds)

    def finish(self, rec: RequestRecord) -> None:
        """Publish a finished record: llmload's listeners, then ONE Locust request event (``--locust-ttft-rows``: two).

        Locust's statistics count one entry per finished request, so its header RPS and
        failure ratio are the request rate and error ratio: request type ``E2E``, name = the
        class, response time = E2E in ms (from the intended send time in an open loop), a
        failure carries ``kind: message``, the length is the request's output tokens (Locust
        labels it bytes; docs/metrics.md "Locust's own columns"). An interrupted request is not a
        finished one: it fires nothing. ``--locust-ttft-rows`` adds a ``TTFT`` entry per
        success that had a first token.
        """
        if rec.intended_ns and self._tickets_open:
            self._tickets_open -= 1
            if not self._tickets_open and self._trace is not None and self._schedule_done():
                self._schedule_done_hook()  # the run can end now, not at the next report
        env = self._environment
        events = env.events
        cast("_LlmloadEvents", events).llmload_request.fire(record=rec, environment=env)
        if rec.outcome == "interrupted" or rec.warmup:  # a warm-up request: in no statistic, Locust's neither
            return
        exc = None if rec.outcome == "ok" else RequestFailed(f"{rec.error_kind}: {rec.error_message}")
        events.request.fire(
            request_type="E2E",
            name=rec.class_name,
            response_time=(rec.end_ns - origin_ns(rec)) / 1e6,
            response_length=rec.output_tokens,
            exception=exc,
            context={"output_tokens": rec.output_tokens},
        )
        if self.config.locust_ttft_rows and rec.chunk_ns and rec.outcome == "ok":
            events.request.fire(
                request_type="TTFT",
                name=rec.class_name,
                response_time=(rec.chunk_ns[0] - origin_ns(rec)) / 1e6,
                response_length=0,
                exception=None,
                context={},
            )

    # -- recording -----------------------------------------------------------------------
    def on_record(self, rec: RequestRecord) -> None:
        """The built-in ``llmload_request`` listener: statistics, and the JSONL dump when asked."""
        if not self.warmup.add(rec):  # a warm-up request goes to the warm-up's statistics alone
            self.recorder.add(rec)
        if self.dump is not None:
            self.dump.add(rec)

    def open_dump(self, path: str) -> None:
        """Start this test's ``--records-jsonl`` (a worker writes ``<stem>.worker<N><suffix>``)."""
        self.close_dump()
        if path:
            self.dump = RecordDump(dump_path(path, self._worker_index()))

    def close_dump(self) -> None:
        if self.dump is not None:
            self.dump.close()
            self.dump = None

    def report(self, final: bool = False) -> ReportWire:
        """What this process tells the aggregator: the statistics delta and its gauges."""
        by_class: dict[str, int] = {}
        watchdog = self.watchdog
        for flight in watchdog.flights:
            name = flight.record.class_name
            by_class[name] = by_class.get(name, 0) + 1
        if self.dump is not None:
            self.dump.flush()
        cpu, lag = self.monitor.sample()
        gauges = WorkerGauges(
            users=self._user_count(),
            in_flight=watchdog.in_flight,
            in_flight_by_class=by_class,
            cpu_ratio=cpu,
            loop_lag_s=lag,
            schedule_done=self._schedule_done(),
        )
        report: ReportWire = {"m": self.recorder.drain(), "s": self.recorder.drain_steps(), "g": gauges.to_wire(),
                              "final": final}  # fmt: skip
        warmup = self.warmup.drain()
        if warmup is not None:
            report["w"] = warmup
        if self.dispatcher is not None:  # final: the arrivals still queued are counted unsent (drain_stats)
            report["a"] = self.dispatcher.drain_stats(final=final).to_wire()
        return report

    def _schedule_done(self) -> bool:
        """A finite schedule (trace) is all released, taken, and every request of it has finished."""
        d = self.dispatcher
        return d is not None and d.exhausted and not d.pending and not self._tickets_open

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> None:
        self.monitor.start()

    def on_test_start(self) -> None:
        self.monitor.sample()  # start-up work before the test is not the test's CPU
        self._start_dispatcher()
        self._start_warmup()

    def on_test_stop(self) -> None:
        """No arrival after the stop (what the dispatcher counted stays for the final report)."""
        if self.dispatcher is not None:
            self.dispatcher.stop()

    def _on_step(self, index: int | None, steady: bool) -> None:
        """A rate ladder's step changed (on every process, when the tracker does): offer its rate from now.

        The rate follows the tracker, not a precomputed timetable, so that each step's window
        (which the ladder's shape opens on its ~1 s ticks) holds that step's rate only; workers
        change it when the master's step message arrives. After the last step: rate 0.
        """
        ladder, dispatcher = self.config.ladder, self.dispatcher
        if dispatcher is None or ladder is None or not ladder.by_rate:
            return
        rate = ladder.rate_at(index) if index is not None else 0.0
        if rate is not None and rate != dispatcher.plan.rate:
            dispatcher.set_rate(rate)

    def _start_dispatcher(self) -> None:
        old, self.dispatcher = self.dispatcher, None
        if old is not None:
            old.stop()
        arrival = self.config.arrival
        if not arrival.open_loop:
            return
        share = self._schedule()
        worker, workers, t0_wall = share or (0, 1, None)
        self._tickets_open = 0
        trace, source, times = self._trace, arrival.trace, None
        if trace is not None and source is not None:  # wall seconds at rate 1; no share: an empty schedule, at its end
            times = [trace.entries[i].timestamp_ms / 1000.0 / source.speedup for i in trace.arrivals] if share is not None else []
            plan = RatePlan(1.0)
        else:
            plan = RatePlan(arrival.first_rate if share is not None else 0.0)  # no share: a dispatcher that never releases
        dispatcher = Dispatcher(arrival.spec, self.config.seed, plan, self.profile.weights, worker, workers, times=times)
        now_ns = time.perf_counter_ns()
        t0_ns = now_ns if t0_wall is None else now_ns + int((t0_wall - time.time()) * 1e9)
        dispatcher.start(t0_ns)
        self.dispatcher = dispatcher

    def _start_warmup(self) -> None:
        """This test's warm-up: from the common start (an open loop's, or the one a master sent for the warm-up),
        this process's share of ``--warmup-requests``. Without warm-up the origin still dates the measured
        requests' starts (the cold-start check)."""
        warmup = self.config.warmup
        share = self._schedule() if warmup.on or self.config.arrival.open_loop else (0, 1, None)
        worker, workers, t0_wall = share or (0, 1, None)
        now_ns = time.perf_counter_ns()
        origin_ns = now_ns if t0_wall is None else now_ns + int((t0_wall - time.time()) * 1e9)  # as the dispatcher's
        self.warmup.start(origin_ns, warmup.duration_s, request_share(warmup.requests, worker, workers))

    def stop(self) -> None:
        self.on_test_stop()
        self.close_dump()
        if self._watchdog is not None:
            self._watchdog.stop()
        self.monitor.stop()
