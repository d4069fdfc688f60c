"""``--max-regression``: how much worse each metric may get before the gate fails.

``METRIC=LIMIT`` pairs, comma-separated: ``ttft_p99=10%,tpot_p50=5%``. A latency metric is
``ttft|tpot|itl|e2e`` with ``_p50|_p90|_p99``; its limit is relative (``10%`` or ``0.1``: the
candidate may be 10 % slower). ``error_rate``'s limit is absolute (``1%`` or ``0.01``: one
percentage point more errors). ``METRIC=off`` drops a default. Given pairs replace the
defaults key by key; ``--max-regression none`` starts from nothing.

Defaults (:data:`DEFAULT_LIMITS`): the medians, which every real change moves and which are
measured tightly, are held close (TPOT/ITL p50 5 %, TTFT/E2E p50 10 %); the tails that users
feel (TTFT and E2E p99) at 15 %: a p99's interval is wider, so a tighter limit would make
most gates inconclusive rather than stricter. TPOT/ITL p99 are not in the defaults: a
per-request mean of a few gaps, their tail is mostly the client's and the network's jitter
(±30-60 % over 760 requests on a busy 2-core box); add ``tpot_p99=10%`` to hold it.
"""

from __future__ import annotations

from collections.abc import Mapping

from llmload.errors import ConfigError

__all__ = ["DEFAULT_LIMITS", "LATENCY_METRICS", "METRICS", "limit_text", "parse_limits"]

#: metric -> (latency, percentile)
LATENCY_METRICS = {f"{m}_{p}": (m, p) for m in ("ttft", "tpot", "itl", "e2e") for p in ("p50", "p90", "p99")}
#: Every metric the gate compares.
METRICS = (*LATENCY_METRICS, "error_rate")
#: The limits used when --max-regression does not say otherwise.
DEFAULT_LIMITS: Mapping[str, float] = {
    "ttft_p50": 0.10,
    "ttft_p99": 0.15,
    "tpot_p50": 0.05,
    "itl_p50": 0.05,
    "e2e_p50": 0.10,
    "e2e_p99": 0.15,
    "error_rate": 0.01,
}
_EXAMPLE = "e.g. --max-regression ttft_p99=10%,tpot_p50=5%,error_rate=1%"


def _value(text: str, key: str) -> float | None:
    t = text.strip().lower()
    if t in ("off", "none"):
        return None
    try:
        v = float(t[:-1]) / 100.0 if t.endswith("%") else float(t)
    except ValueError:
        raise ConfigError(f"--max-regression {key}={text}: not a share; write 10% or 0.1 ({_EXAMPLE})") from None
    if not 0 <= v < 100:
        raise ConfigError(f"--max-regression {key}={text}: must be >= 0 ({_EXAMPLE})")
    return v


def parse_limits(text: str | None) -> dict[str, float]:
    """The limits ``text`` sets over :data:`DEFAULT_LIMITS` (module docstring); ConfigError, one line, when bad."""
    text = (text or "").strip()
    limits = dict(DEFAULT_LIMITS)
    if text.lower() == "none" or text.lower().startswith("none,"):
        limits, text = {}, text[5:]
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq:
            raise ConfigError(f"--max-regression {part!r}: write METRIC=LIMIT ({_EXAMPLE})")
        if key not in METRICS:
            raise ConfigError(f"--max-regression {key}: unknown metric; one of {', '.join(METRICS)}")
        got = _value(value, key)
        if got is None:
            limits.pop(key, None)
        else:
            limits[key] = got
    if not limits:
        raise ConfigError(f"--max-regression: no metric left to compare ({_EXAMPLE})")
    return {k: limits[k] for k in METRICS if k in limits}


def limit_text(metric: str, limit: float) -> str:
    """``+10 %`` (relative) or ``+1 pt`` (error rate, absolute)."""
    if metric == "error_rate":
        return f"+{limit * 100:g} pt"
    return f"+{limit * 100:g} %"
