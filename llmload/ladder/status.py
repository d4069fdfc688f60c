"""Where a running ladder is, in one line for people and as fields for scripts: the LLM tab's ladder status.

:func:`ladder_status` reads the plan, the tracker (which step runs, steady or warming up),
the driver's end of the running step and the live judge's verdict so far
(:class:`~llmload.ladder.judge.LiveJudge`: each closed step is judged once its reports are
in, :data:`~llmload.ladder.judge.REPORT_GRACE_S` after it ended). The fields::

    {"step": 1, "steps": 3, "users": 4, "rate": None, "phase": "steady", "left_s": 12.0,
     "verdict": {"status": "ok", "judged": 1, "safe_users": 1, ...}, "text": "step 2 of 3: ..."}

``phase`` is ``waiting`` (no step yet), ``baseline`` (the pre-run: one user until
``--baseline-requests`` succeeded), ``warm-up`` (not measured), ``steady`` or ``ended``.
The verdict is the live judge's, not the summary's (which guards it against thin
evidence): "so far" in the text says so. Pure: the caller passes the clock's reading.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmload.config.ladder import LadderConfig
from llmload.jsonvalue import Json
from llmload.ladder.judge import REPORT_GRACE_S
from llmload.ladder.tracker import StepWindow
from llmload.report.fmt import breach_sentence, rate, users
from llmload.results.judgement import Verdict
from llmload.results.model import BASELINE_STEP

__all__ = ["duration_text", "ladder_status"]


def duration_text(seconds: float) -> str:
    """``45 s``, ``4 min 05 s``, ``1 h 02 min``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _level(plan: LadderConfig, index: int, sessions: bool = False) -> str:
    r = plan.rate_at(index)
    return f"{rate(r)} at -u {plan.levels[index]}" if r is not None else _count(plan.levels[index], sessions)


def _count(n: int | None, sessions: bool) -> str:
    """``4 users``, or ``4 sessions`` on a ladder over sessions (each user one session)."""
    return users(n).replace("user", "session") if sessions else users(n)


def _verdict(verdict: Verdict | None, judged: int, stop_on_breach: bool,
             sessions: bool = False) -> tuple[dict[str, Json] | None, str]:  # fmt: skip
    if not judged:
        return None, f"no step judged yet (each is judged {REPORT_GRACE_S:g} s after it ends)"
    if verdict is None:
        return None, "no usable baseline yet (the first step needs successful requests)"
    safe = rate(verdict.safe_rate) if verdict.safe_rate is not None else _count(verdict.safe_users, sessions)
    fields: dict[str, Json] = {
        "status": verdict.status,
        "judged": verdict.steps_judged,
        "safe_step": verdict.safe_step,
        "safe_users": verdict.safe_users,
        "safe_rate": verdict.safe_rate,
        "breach": verdict.breach.to_dict() if verdict.breach is not None else None,
    }
    if verdict.status == "breach" and verdict.breach is not None:
        text = breach_sentence(verdict.breach.to_dict(), "sessions" if sessions else "users").rstrip(".")
        text += f"; within the limits up to {safe}" if verdict.safe_step is not None else "; no step within the limits"
        if stop_on_breach:
            text += "; the ladder stops (--stop-on-breach)"
        return fields, text
    if verdict.status == "ok":
        judged_steps = f"{verdict.steps_judged} step{'s' if verdict.steps_judged != 1 else ''}"
        return fields, f"within the limits up to {safe} ({judged_steps} judged)"
    return fields, verdict.note or verdict.status


def ladder_status(
    plan: LadderConfig | None,
    windows: Sequence[StepWindow],
    current: tuple[int, int, bool] | None,
    step_ends_at: float | None,
    verdict: Verdict | None,
    judged: int,
    now: float,
    sessions: bool = False,
) -> dict[str, Json] | None:
    """The status (module docstring); None without a ladder. ``current`` is the tracker's ``(index, users, steady)``,
    ``step_ends_at`` the driver's (wall clock, as ``now``), ``judged`` the closed windows the judge has seen;
    ``sessions``: the ladder is over sessions (the :class:`~llmload.ladder.judge.LiveJudge`'s ``sessions``), its
    steps named ``4 sessions``."""
    if plan is None:
        return None
    n = len(plan.levels)
    out: dict[str, Json] = {"step": None, "steps": n, "users": None, "rate": None, "left_s": None}
    if current is None:
        out["phase"] = "ended" if windows else "waiting"
        where = "ladder ended" if windows else f"ladder of {n} steps, {duration_text(plan.step_s)} each: waits for the test"
    elif current[0] == BASELINE_STEP:
        out.update(step=BASELINE_STEP, users=current[1], phase="baseline")
        where = f"pre-run baseline: 1 user until {plan.baseline_requests} requests succeed"
    else:
        index, count, steady = current
        left = max(0.0, step_ends_at - now) if step_ends_at is not None else None
        out.update(step=index, users=count, rate=plan.rate_at(index), phase="steady" if steady else "warm-up",
                   left_s=round(left, 1) if left is not None else None)  # fmt: skip
        phase = "steady" if steady else "warm-up (not measured)"
        where = f"step {index + 1} of {n}: {_level(plan, index, sessions)}, {phase}"
        if left is not None:
            where += f", {duration_text(left)} left in the step"
    fields, text = _verdict(verdict, judged, plan.stop_on_breach, sessions)
    out["verdict"] = fields
    out["text"] = f"{where} · verdict so far: {text}"
    return out
