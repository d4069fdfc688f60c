"""The verdict of a ladder over sessions in words: "max sessions under SLO: 40 (...); 60 sessions breach: ...".

:func:`session_sentence` words one :class:`~llmload.analysis.sessions.SessionVerdict` for the
console (its ``verdict:`` line), the report's data (``sessions``, :mod:`llmload.report.data`) and
so the Markdown and HTML verdicts. Examples::

    max sessions under SLO: 40 (TTFT p99 820 ms <= 1,000 ms, attainment 99.2 % >= 99.0 %; session p50 12.3 s,
    4.0 turns); 60 sessions breach: attainment 93.1 % < 99.0 %, most missed ttft_ms (TTFT p99 1.4 s > 1,000 ms)

    max sessions within +50 % of the 1-session baseline: 8 (TTFT p50 61 ms <= 75 ms, TPOT p50 21 ms <= 30 ms;
    4.0 turns per session); 16 sessions breach: TTFT p50 140 ms > 75 ms
"""

from __future__ import annotations

from llmload.analysis.sessions import Figure, SessionLevel, SessionVerdict
from llmload.report import fmt

__all__ = ["figure_text", "session_headline", "session_sentence", "sessions"]

_LATENCY = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2e": "E2E"}


def sessions(n: int | None) -> str:
    """``1 session``, ``40 sessions``."""
    if n is None:
        return fmt.DASH
    return f"{n} session" if n == 1 else f"{n} sessions"


def _name(metric: str) -> str:
    """``ttft_p99`` -> ``TTFT p99``; a class's ``chat:ttft_p99`` -> ``chat TTFT p99``; ``error_rate`` -> ``error rate``."""
    scope, _, m = metric.rpartition(":")
    head, _, q = m.rpartition("_")
    name = f"{_LATENCY[head]} {q}" if head in _LATENCY else m.replace("_", " ")
    return f"{scope} {name}" if scope else name


def figure_text(f: Figure) -> str:
    """``TTFT p99 820 ms <= 1,000 ms``, ``> 1,000 ms`` over it; a floor (attainment): ``>=``, ``<`` below it."""
    ratio = f.metric in ("attainment", "error_rate")
    show = (lambda x: fmt.pct(x)) if ratio else fmt.ms
    text = f"{_name(f.metric)} {show(f.value)}"
    if f.limit is None:
        return text
    floor = f.metric == "attainment"
    within = f.value is None or (f.value >= f.limit if floor else f.value <= f.limit)
    cmp = (">=" if floor else "<=") if within else ("<" if floor else ">")
    return f"{text} {cmp} {show(f.limit)}"


def _duration(ms: float) -> str:
    """A session's duration: ``850 ms``, ``6.09 s``, ``2 min 05 s``."""
    if ms < 1000:
        return fmt.ms(ms)
    s = ms / 1000
    return f"{fmt.num(s)} s" if s < 60 else f"{int(s // 60)} min {round(s % 60):02d} s"


def _per_session(level: SessionLevel) -> str | None:
    turns = f"{level.turns_per_session:.1f} turns" if level.turns_per_session is not None else None
    if level.duration_p50_ms is not None:
        return f"session p50 {_duration(level.duration_p50_ms)}" + (f", {turns}" if turns else "")
    return f"{turns} per session" if turns else None


def _held(level: SessionLevel) -> str:
    """What the held step showed: its figures within their limits; per session."""
    parts = ", ".join(figure_text(f) for f in level.figures)
    return "; ".join(p for p in (parts, _per_session(level)) if p)


def _failed(level: SessionLevel, v: SessionVerdict) -> str:
    figs = [f for f in level.figures if f.metric == "attainment"] if v.basis == "slo" else list(level.figures)
    text = ", ".join(figure_text(f) for f in figs)
    if v.basis == "slo" and v.missed:
        rest = [figure_text(f) for f in level.figures if f.metric != "attainment"]
        text += f", most missed {v.missed}" + (f" ({', '.join(rest)})" if rest else "")
    verb = "breaches" if level.sessions == 1 else "breach"
    return f"{sessions(level.sessions)} {verb}: {text}"


def session_sentence(v: SessionVerdict) -> str:
    """The verdict in one line (module docstring)."""
    if v.basis == "slo":
        head = "max sessions under SLO"
    else:
        head = f"max sessions within +{v.degradation * 100:g} % of the {sessions(v.baseline_sessions).replace(' ', '-')} baseline"
    if v.held is None:
        text = f"{head}: none"
    else:
        inner = _held(v.held)
        if v.status == "ok":
            text = f"{head}: at least {v.held.sessions} (the top step" + (f"; {inner})" if inner else ")")
        else:
            so_far = " so far" if v.status == "insufficient_data" else ""
            text = f"{head}: {v.held.sessions}{so_far}" + (f" ({inner})" if inner else "")
    if v.failed is not None:
        text += "; " + _failed(v.failed, v)
    if v.status == "ok":
        text += "; extend --ladder to find the limit"
    elif v.status == "insufficient_data" and v.note:
        text += f"; {v.note}"
    return text


def session_headline(v: SessionVerdict) -> str:
    """The verdict's headline: ``Max sessions under SLO: 40`` (``at least 60`` when no step broke, ``none``)."""
    head = "Max sessions under SLO" if v.basis == "slo" else f"Max sessions within +{v.degradation * 100:g} %"
    if v.held is None:
        return f"{head}: none"
    return f"{head}: " + (f"at least {v.held.sessions}" if v.status == "ok" else str(v.held.sessions))
