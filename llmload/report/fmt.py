"""Number formatting shared by the report writers: one look for a value everywhere.

Every function takes ``None`` (no data) and returns ``"-"`` for it.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

__all__ = ["DASH", "breach_sentence", "breach_value", "ladder_levels", "metric_name", "ms", "num", "pct", "rate", "rate_band", "signed",
           "signed_pct", "slo_sentence", "step_label", "step_named", "users", "value"]

DASH = "-"


def _ok(v: float | None) -> TypeGuard[float]:
    return v is not None and not (isinstance(v, float) and not math.isfinite(v))


def num(v: float | None, digits: int = 3) -> str:
    """About ``digits`` significant figures, thousands separated: 0.0123, 1.23, 123, 12,345."""
    if not _ok(v):
        return DASH
    if isinstance(v, int):
        return f"{v:,}"
    a = abs(float(v))
    if a == 0:
        return "0"
    if a >= 10 ** (digits - 1):
        return f"{v:,.0f}"
    decimals = digits - 1 - math.floor(math.log10(a))
    return f"{v:,.{max(0, decimals)}f}"


def ms(v: float | None, unit: bool = True) -> str:
    """Milliseconds: ``51.8 ms``; from 10 s on in seconds (``12.4 s``)."""
    if not _ok(v):
        return DASH
    if abs(v) >= 10_000:
        return f"{num(v / 1000)} s" if unit else num(v / 1000)
    return f"{num(v)} ms" if unit else num(v)


def pct(ratio: float | None, digits: int = 1) -> str:
    """A 0..1 ratio as a percentage: ``0.123`` -> ``12.3 %``."""
    if not _ok(ratio):
        return DASH
    return f"{ratio * 100:.{digits}f} %"


def signed(v: float | None) -> str:
    if not _ok(v):
        return DASH
    return ("+" if v > 0 else "") + num(v)


def signed_pct(ratio: float | None) -> str:
    """A relative change: ``0.25`` -> ``+25.0 %``."""
    if not _ok(ratio):
        return DASH
    text = pct(ratio)
    if text.lstrip("-") == pct(0.0):  # no "-0.0 %"
        return pct(0.0)
    return ("+" if ratio > 0 else "") + text


def value(v: Any) -> str:
    """Any evidence value: a number as :func:`num`, a flag as yes/no, text as is."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)) or v is None:
        return num(v)
    return str(v)


def users(n: int | None) -> str:
    if n is None:
        return DASH
    return f"{n} user" if n == 1 else f"{n} users"


_METRIC_NAMES = {
    "ttft_p50": "TTFT p50",
    "tpot_p50": "TPOT p50",
    "ttft_p99": "TTFT p99",
    "tpot_p99": "TPOT p99",
    "e2e_p50": "latency p50 (E2E)",
    "e2e_p99": "latency p99 (E2E)",
    "error_rate": "error rate",
    "achieved_rate": "achieved rate",
}


def metric_name(metric: str | None) -> str:
    """A verdict metric key as people write it: ``ttft_p50`` -> ``TTFT p50``."""
    return _METRIC_NAMES.get(metric or "", metric or DASH)


def rate(r: float | None) -> str:
    """An offered or achieved request rate: ``4 req/s``."""
    return DASH if r is None else f"{r:.3g} req/s"


def step_label(step: dict[str, Any]) -> str:
    """A step as people name it: ``8 users`` (a ladder over sessions' step, which has ``sessions``: ``8 sessions``),
    or ``4 req/s`` for a rate ladder's step."""
    if step.get("rate_offered") is not None:
        return rate(step["rate_offered"])
    if step.get("sessions") is not None:
        n = step["sessions"]
        return f"{n} session" if n == 1 else f"{n} sessions"
    return users(step.get("users"))


def step_named(steps: list[dict[str, Any]], index: int | None, n_users: int | None) -> str:
    """The report step of ``index`` as people name it (``4 req/s`` in a rate ladder), else ``n_users``."""
    step = next((s for s in steps if index is not None and s.get("index") == index), None)
    return step_label(step) if step is not None else users(n_users)


def rate_band(steps: list[dict[str, Any]], band_steps: list[int | None] | None) -> str | None:
    """A rate ladder's confidence band from its step indices: ``1–2 req/s``; None without both ends."""
    lo, hi = ((band_steps or []) + [None, None])[:2]
    rates = {s.get("index"): s.get("rate_offered") for s in steps}
    if rates.get(lo) is None or rates.get(hi) is None:
        return None
    return f"{rates[lo]:g}–{rates[hi]:g} req/s" if lo != hi else rate(rates[lo])


def ladder_levels(ladder: dict[str, Any] | None, sep: str = ", ", unit: str = "users") -> str | None:
    """A run config's ladder as people name it: ``1, 4, 8 users`` (``unit`` ``sessions``, a ladder over sessions:
    ``1, 4, 8 sessions``), or ``1, 2, 4 req/s at 16 users`` for a rate ladder (whose ``levels`` are only its
    in-flight cap, repeated); None without a ladder."""
    if not ladder or not ladder.get("levels"):
        return None
    levels = ladder["levels"]
    if ladder.get("rates"):
        return f"{sep.join(f'{r:g}' for r in ladder['rates'])} req/s at {users(levels[0])}"
    return f"{sep.join(str(n) for n in levels)} {unit}"


def breach_value(breach: dict[str, Any], key: str = "value") -> str:
    v = breach.get(key)
    if breach.get("metric") == "achieved_rate":
        return rate(v)
    return pct(v, 2) if breach.get("metric") == "error_rate" else ms(v)


def breach_sentence(breach: dict[str, Any], unit: str = "users") -> str:
    """``TTFT p50 broke the limit at 8 users: 1,238 ms > 77.7 ms (baseline 51.8 ms).`` (rate steps: ``at 4 req/s``;
    ``unit`` ``sessions``: ``at 8 sessions``, a ladder over sessions)."""
    n = breach.get("users")
    where = rate(breach["rate"]) if breach.get("rate") is not None else users(n).replace("user", unit[:-1])
    cmp = "<" if breach.get("metric") == "achieved_rate" else ">"
    text = (
        f"{metric_name(breach.get('metric'))} broke the limit at {where}: "
        f"{breach_value(breach)} {cmp} {breach_value(breach, 'limit')}"
    )
    if breach.get("baseline") is not None:
        text += f" (baseline {breach_value(breach, 'baseline')})"
    return text + "."


def slo_sentence(slo: dict[str, Any] | None, steps: list[dict[str, Any]] | None = None) -> str | None:
    """The SLO verdict in one line: the target, the limits per class, up to which step they held.

    ``steps`` (the report's) name a rate ladder's steps by their offered rate (``up to 2 req/s``).
    """
    if not slo:
        return None
    o, steps = slo.get("overall") or {}, steps or []
    limits = "; ".join(f"{n}: " + ", ".join(f"{k} <= {v:g}" for k, v in lim.items()) for n, lim in (slo.get("slos") or {}).items() if lim)
    if o.get("status") in ("met", "missed"):
        held = f"{o['status']} over the run (attainment {pct(o.get('attainment'))})"
    elif o.get("safe_users"):
        held = f"attainment >= target up to {step_named(steps, o.get('safe_step'), o.get('safe_users'))}"
    else:
        held = "no step met the target"
    if o.get("failed_slo"):
        at = f" at {step_named(steps, o.get('failed_step'), o.get('failed_users'))}" if o.get("failed_users") else ""
        held += f"; first failed: {o['failed_slo']}{at}"
    return f"target {pct(slo.get('target'))}: {held} ({limits})"
