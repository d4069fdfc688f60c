"""The steps the verdict and the diagnosis read: one :class:`StepView` per ladder step.

A view flattens a :class:`~llmload.results.model.StepResult` into what the rules compare:
the client's figures (:class:`Perf`: p50/p99 latencies in ms, rates, the error rate
``errors / (ok + errors)`` and the Little's-law in-flight mean, see
:meth:`~llmload.results.model.Stats.in_flight_mean`, capped at the users times what one user can
have in flight, :func:`per_user`: more than one with sub-agent fan-out), the p50 intervals, and the server/GPU
signals of its steady window. Pure: typed results in, dataclasses out.

Per-request phase evidence (:mod:`llmload.metrics.parts.phases`): ``Perf.tail`` holds the mean
share of TTFT each part took over the requests at or above the step's TTFT p90, but only
when at least :data:`PHASE_COVERAGE_MIN` of its successful requests carried the server's own
timing; otherwise the rules fall back to the window-averaged signals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from llmload.metrics.parts.agents import AgentFigures
from llmload.metrics.parts.batch_inputs import BatchInputFigures
from llmload.results.model import BASELINE_STEP, RunResult, SignalStats, Stats, StepResult

__all__ = ["PHASE_COVERAGE_MIN", "Perf", "StepView", "batched", "per_user", "step_views", "views_of_steps"]

#: Share of successful requests with server timing above which the rules trust the phases.
PHASE_COVERAGE_MIN = 0.5


@dataclass(frozen=True, slots=True)
class Perf:
    """The client's figures for one step (all classes, or one class). Latencies in ms."""

    requests: int = 0
    ok: int = 0
    errors: int = 0
    ttft_p50: float | None = None
    ttft_p99: float | None = None
    ttft_mean: float | None = None
    tpot_p50: float | None = None
    tpot_p99: float | None = None
    itl_p50: float | None = None
    itl_p99: float | None = None
    e2e_p50: float | None = None
    e2e_p99: float | None = None
    e2e_mean: float | None = None
    tok_s: float = 0.0
    req_s: float = 0.0
    error_rate: float | None = None
    in_flight: float | None = None
    input_tokens_mean: float | None = None
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    phase_coverage: float | None = None  # share of successful requests with server timing
    tail: dict[str, float] | None = None  # p90-tail TTFT shares (gateway, server_queue, prefill, other), when covered
    batched: bool = False  # its requests were batches of inputs (embeddings, rerank: one JSON answer each): latency is E2E

    def tail_share(self, part: str) -> float | None:
        """Mean share of TTFT ``part`` took at or above the TTFT p90; None without enough server timing."""
        return None if self.tail is None else self.tail.get(part)

    @property
    def finished(self) -> int:
        """Requests with an outcome the verdict can judge (ok + errors)."""
        return self.ok + self.errors

    def value(self, metric: str) -> float | None:
        """``"ttft_p50"`` → :attr:`ttft_p50`; ``"error_rate"`` → :attr:`error_rate`."""
        return getattr(self, metric, None)

    @classmethod
    def from_stats(cls, s: Stats | None, users: int, span_s: float) -> Perf:
        if s is None or s.requests == 0 and s.ok == 0:
            return cls()
        ttft, tpot, itl, e2e = s.lat("ttft"), s.lat("tpot"), s.lat("itl"), s.lat("e2e")
        return cls(
            requests=s.requests,
            ok=s.ok,
            errors=s.errors,
            ttft_p50=ttft.p50,
            ttft_p99=ttft.p99,
            ttft_mean=ttft.mean,
            tpot_p50=tpot.p50,
            tpot_p99=tpot.p99,
            itl_p50=itl.p50,
            itl_p99=itl.p99,
            e2e_p50=e2e.p50,
            e2e_p99=e2e.p99,
            e2e_mean=e2e.mean,
            tok_s=s.output_tokens_per_s,
            req_s=s.requests_per_s,
            error_rate=s.error_rate,
            in_flight=s.in_flight_mean(users * per_user(s), span_s),
            input_tokens_mean=s.input_tokens / s.ok if s.ok else None,
            errors_by_kind=dict(s.errors_by_kind),
            phase_coverage=s.phases.coverage,
            tail=_tail(s),
            batched=batched(s),
        )


def per_user(s: Stats) -> int:
    """The most requests one user (session) of ``s`` can have in flight at once: 1, or with sub-agent fan-out
    (:mod:`llmload.workload.fanout`) its children per fan-out (the parent waits for them with no request of its
    own in flight), read off the figures as children started / fan-outs, rounded up."""
    fan = s.part(AgentFigures).fanout
    if fan is None or not fan.started:
        return 1
    return max(1, math.ceil(fan.started / max(1, fan.fanouts)))


def batched(s: Stats) -> bool:
    """Requests of batched inputs (embeddings, rerank): one JSON answer each, whose latency is E2E (no TTFT/TPOT)."""
    return s.part(BatchInputFigures).requests > 0


def _tail(s: Stats) -> dict[str, float] | None:
    t = s.phases.tail.get("p90")
    cov = s.phases.coverage
    if t is None or not t.requests or cov is None or cov < PHASE_COVERAGE_MIN:
        return None
    return {k: v for k, v in t.shares.items() if v is not None}


@dataclass(frozen=True, slots=True)
class StepView:
    """One load step: who ran it, the client's figures, and the server/GPU signals of its steady window.

    ``index`` is the ladder index (``-1`` = the single-request pre-run), or ``None`` for a
    whole run without a ladder (see :func:`step_views`).
    """

    index: int | None
    users: int
    steady_s: float
    perf: Perf
    classes: dict[str, Perf] = field(default_factory=dict)
    server: SignalStats = field(default_factory=dict)
    gpu: SignalStats = field(default_factory=dict)
    ci: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    rate_offered: float | None = None  # a rate ladder's step (requests/s)
    rate_achieved: float | None = None

    def s(self, name: str, stat: str = "mean") -> float | None:
        """A server signal's statistic over the steady window (None when not collected)."""
        v = (self.server.get(name) or {}).get(stat)
        return float(v) if isinstance(v, (int, float)) else None

    def g(self, name: str, stat: str = "mean") -> float | None:
        """A GPU signal's statistic over the steady window (None when not collected)."""
        v = (self.gpu.get(name) or {}).get(stat)
        return float(v) if isinstance(v, (int, float)) else None

    def interval(self, metric: str) -> tuple[float, float] | None:
        """The p50 confidence interval of ``"ttft"``/``"tpot"`` (None when unknown)."""
        return self.ci.get(metric)

    @property
    def label(self) -> str:
        users = "1 user" if self.users == 1 else f"{self.users} users"
        if self.rate_offered is not None and self.index is not None and self.index >= 0:
            return f"{self.rate_offered:g} req/s"
        if self.index is None:
            return f"{users} (whole run)"
        return "the baseline pre-run" if self.index == BASELINE_STEP else users


def _view(st: StepResult) -> StepView:
    return StepView(
        index=st.index,
        users=st.users,
        steady_s=st.steady_s,
        perf=Perf.from_stats(st.overall, st.users, st.steady_s),
        classes={n: Perf.from_stats(c, st.users, st.steady_s) for n, c in st.classes.items()},
        server=dict(st.server),
        gpu=dict(st.gpu),
        ci=dict(st.ci),
        rate_offered=st.rate_offered,
        rate_achieved=st.rate_achieved,
    )


def _run_signals(part: Mapping[str, Any] | None) -> SignalStats:
    """The whole run's ``server``/``gpu`` signals in the per-step vocabulary (counters as ``*_rate_per_s``)."""
    out: SignalStats = {}
    for name, st in ((part or {}).get("signals") or {}).items():
        if not isinstance(st, Mapping):
            continue
        if "rate_per_s" in st:
            out[f"{name}_rate_per_s"] = {"mean": st["rate_per_s"], "max": st.get("rate_max_per_s", st["rate_per_s"])}
        elif name.endswith("_ms") and "mean" in st:
            out[f"{name[:-3]}_mean_ms"] = {"mean": st["mean"]}
        elif "mean" in st:
            out[name] = {k: st[k] for k in ("mean", "min", "max", "last") if k in st}
        elif "value" in st:
            out[name] = {"mean": st["value"]}
    return out


def views_of_steps(steps: Sequence[StepResult]) -> list[StepView]:
    """The steps as views, in index order (the pre-run first when there is one)."""
    return [_view(st) for st in sorted(steps, key=lambda st: st.index)]


def step_views(result: RunResult) -> list[StepView]:
    """The run's ladder steps as views, in order; a run without a ladder gives one view of the whole run.

    That view (``index`` None, its users the run's maximum, the run's ``server``/``gpu``
    means) lets the diagnosis read levels such as KV usage, but nothing is compared with a
    baseline.
    """
    if result.steps:
        return views_of_steps(result.steps)
    users, duration = result.users_max, result.duration_s
    return [
        StepView(
            index=None,
            users=users,
            steady_s=duration,
            perf=Perf.from_stats(result.overall, users, duration),
            classes={n: Perf.from_stats(c, users, duration) for n, c in result.classes.items()},
            server=_run_signals(result.server),
            gpu=_run_signals(result.gpu),
        )
    ]
