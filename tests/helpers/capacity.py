"""Measured runs made on the virtual clock: a known engine model, a closed-loop ladder, exact timing."""

from __future__ import annotations

from llmload.capacity.drive import ClassSpec, Sent, StepSpec, Workload, drive, step_bounds
from llmload.capacity.measured import Measured, Req, Step
from llmload.sim.params import EngineParams
from llmload.workload.distributions import Fixed

MIX = (ClassSpec("short", 1, Fixed(100), Fixed(60)), ClassSpec("long", 1, Fixed(1200), Fixed(120)))


def ladder(levels: tuple[int, ...], step_s: float = 60.0, warmup_s: float = 10.0, classes=MIX) -> Workload:
    return Workload(classes, tuple(StepSpec(n, step_s, warmup_s) for n in levels))


def _req(s: Sent) -> Req:
    """A driven request as its record reads back (its user, conversation and prefix-cache hit included)."""
    cached = s.seq.cached_tokens if s.seq is not None else None
    return Req(s.t, s.times[0], s.times[-1], s.times[-1], s.prompt, len(s.times), s.cls, None, None, s.done,
               cached, str(s.user) if s.user >= 0 else "", s.session, s.turn)  # fmt: skip


def measured(params: EngineParams, w: Workload) -> Measured:
    reqs = tuple(_req(s) for s in drive(params, w) if not s.error and s.times)
    steps = tuple(
        Step(i, st.users, st.rate, a, b, c)
        for i, (st, (a, b, c)) in enumerate(zip(w.steps, step_bounds(w), strict=True))
    )
    return Measured(reqs, steps, {}, 0.0, "synthetic")


def step_p50(params: EngineParams, w: Workload, step: int) -> tuple[float, float]:
    """(TTFT p50, TPOT p50) in seconds of the requests started in ``step``'s steady window and finished."""
    _, steady, end = step_bounds(w)[step]
    done = [s for s in drive(params, w) if s.done and not s.error and steady <= s.t < end and len(s.times) > 1]
    ttft = sorted(s.times[0] - s.t for s in done)
    tpot = sorted((s.times[-1] - s.times[0]) / (len(s.times) - 1) for s in done)
    return ttft[len(ttft) // 2], tpot[len(tpot) // 2]
