"""The verdict's ``slo``: up to which ladder step the service meets its SLOs.

A step *meets* its SLOs when its attainment (good requests / (ok + errors), over the
requests that started in its steady window; :mod:`llmload.metrics.definitions`) is at least
the target ``--slo-attainment`` (default 0.99). The ladder's steps (index >= 0) are judged
in order, like the safe-concurrency verdict (:mod:`llmload.analysis.verdict`): the first
step below the target is the *failed* step, and the SLO-safe level is the step before it
(steps above it are not judged: a later recovery is noise, not capacity). A step with fewer
than :data:`~llmload.analysis.baseline.MIN_REQUESTS` finished requests ends the judgement
(``insufficient_data``). The same is done per request class, on the class's own figures.

**The SLO that failed first** is the one most requests of the failed step missed
(``ttft_ms``, ``tpot_ms`` or ``e2e_ms``), or ``errors`` when failed requests were more
than the misses of any SLO (a failed request is never good). Without a ladder the whole run
is judged once: ``met`` or ``missed``. A rate ladder's steps are named by their offered rate
in notes (a ladder over sessions, :mod:`llmload.analysis.sessions`: ``40 sessions``; the report maps ``safe_step``/``failed_step`` to rates the same way).
"""

from __future__ import annotations

from llmload.analysis.baseline import MIN_REQUESTS
from llmload.analysis.sessions import result_over_sessions
from llmload.results.judgement import SloPass, SloVerdict
from llmload.results.model import RunResult, Stats, StepResult

__all__ = ["failed_slo", "judge_slo"]


def failed_slo(s: Stats) -> str | None:
    """What most of ``s``'s not-good requests missed: an SLO key, or ``errors`` (None when all were good)."""
    g = s.goodput
    if g is None:
        return None
    misses = sorted(g.missed.items(), key=lambda kv: -kv[1])
    top = misses[0] if misses else ("", 0)
    if s.errors > top[1]:
        return "errors"
    return top[0] if top[1] else None


def _where(st: StepResult, unit: str = "user") -> str:
    """A step in a note: ``4 users`` (``4 sessions``: a ladder over sessions), or a rate step's ``2 req/s`` (a rate
    ladder's steps share one -u)."""
    return st.label if st.rate_offered is not None else f"{st.users} {unit}s"


def _judge(steps: list[tuple[StepResult, Stats]], target: float, unit: str = "user") -> SloPass:
    safe: tuple[int, int, Stats] | None = None
    for st, s in steps:
        g = s.goodput
        if g is None or s.finished < MIN_REQUESTS:
            note = f"the step of {_where(st, unit)} finished only {s.finished} requests (at least {MIN_REQUESTS} needed)"
            return _pass("insufficient_data", safe, note=note)
        if g.attainment is None or g.attainment < target:
            return _pass("breach", safe, failed=(st.index, st.users, s))
        safe = (st.index, st.users, s)
    return _pass("ok", safe)


def _pass(status: str, safe: tuple[int, int, Stats] | None, failed: tuple[int, int, Stats] | None = None,
          note: str | None = None) -> SloPass:  # fmt: skip
    att = lambda s: s.goodput.attainment if s.goodput is not None else None  # noqa: E731
    return SloPass(
        status=status,
        attainment=att(safe[2]) if safe else None,
        safe_step=safe[0] if safe else None,
        safe_users=safe[1] if safe else None,
        failed_step=failed[0] if failed else None,
        failed_users=failed[1] if failed else None,
        failed_attainment=att(failed[2]) if failed else None,
        failed_slo=failed_slo(failed[2]) if failed else None,
        note=note,
    )


def _whole_run(s: Stats, target: float) -> SloPass:
    a = s.goodput.attainment if s.goodput is not None else None
    met = a is not None and a >= target
    return SloPass("met" if met else "missed", attainment=a, failed_slo=None if met else failed_slo(s))


def judge_slo(result: RunResult, target: float | None = None) -> SloVerdict | None:
    """The SLO verdict of ``result`` (module docstring); None when the run had no SLOs.

    ``target`` defaults to the run's ``--slo-attainment`` (:attr:`~llmload.results.setup.RunSetup.slo_attainment`).
    """
    if result.overall.goodput is None:
        return None
    target = float(target or result.setup.slo_attainment)
    slos = result.setup.slos or {}
    ladder = [st for st in result.steps if st.index >= 0]
    if not ladder:
        overall = _whole_run(result.overall, target)
        per_class = {n: _whole_run(s, target) for n, s in result.classes.items() if s.requests}
    else:
        unit = "session" if result_over_sessions(result) else "user"
        overall = _judge([(st, st.overall) for st in ladder], target, unit)
        per_class = {
            n: _judge([(st, st.classes[n]) for st in ladder if n in st.classes], target, unit) for n in result.classes
        }
    return SloVerdict(target, {n: s.to_dict() for n, s in slos.items()}, overall, per_class)
