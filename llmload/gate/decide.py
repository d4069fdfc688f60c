"""The gate's decision: are the two runs comparable, and did each metric regress beyond its limit for sure?

Per scope (``overall`` and each class in both runs) and metric of ``--max-regression``
(:mod:`.limits`), with ``b``/``c`` the baseline's and the candidate's figure and ``L`` the limit:

* regression ``r = c / b - 1`` (``error_rate``: ``c - b``, in points), and its 95 % range from
  the two intervals: ``[c.lo / b.hi - 1, c.hi / b.lo - 1]``;
* **FAIL** when the whole range is above the limit (``c.lo > b.hi · (1 + L)``): the regression
  exceeds its limit beyond the noise. For a *tail* (p90, p99) of single runs that is
  INCONCLUSIVE unless ``--strict-tails``: a run's interval covers the sampling noise of its own
  requests, but a tail also moves with the machine's load and the server's state from run to
  run (same-configuration runs against the fixed-latency simulator on a busy 2-core box: TTFT
  p99 66 to 180 ms, each run's interval ±8-15 %). ``--repeat`` aggregates carry that
  run-to-run spread, so their tails FAIL like medians;
* **PASS** when the whole range is within it (``c.hi <= b.lo · (1 + L)``), or when ``r <= L``
  and each side's interval is narrower than ``±L/2`` (the noise could not hide a regression of
  the limit's size);
* **INCONCLUSIVE** otherwise: a side without an interval (too few samples for that percentile:
  p50 6, p90 36, p99 368), or a range that straddles the limit while a side is noisier than
  ``±L/2``, or ``r`` above the limit within the noise. Intervals narrow as ``1/√n``, so it says
  how many more requests (repetitions, for ``--repeat`` aggregates) would decide: the candidate
  alone when that can suffice, else both runs.

The runs are **comparable** when their profile, arrival mode and rate, model, API, host,
users, ladder, max-tokens cap and ignore-eos agree (``--allow-different`` lifts any of them);
two runs that are not are INCONCLUSIVE whatever their figures, with every difference listed.
The gate is FAIL when a check fails (and the runs are comparable), INCONCLUSIVE when one is
inconclusive or the runs are not comparable, else PASS.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.gate.figures import Figure, figure_of, scopes_of
from llmload.gate.limits import limit_text
from llmload.jsonvalue import Json
from llmload.results.model import RunResult

__all__ = ["COMPARED", "Check", "Difference", "GateResult", "comparability", "decide", "judge"]

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
#: Most samples the "more requests" estimate offers before it says "more than".
_MAX_FACTOR = 1000.0


def _profile(r: RunResult) -> dict[str, Json] | None:
    s = r.setup
    return {"name": s.profile_name, "classes": [dict(c.spec) for c in s.classes]} if s.profile_name or s.classes else None


#: What must agree between the runs: key -> how to read it.
COMPARED: Mapping[str, Callable[[RunResult], Any]] = {
    "profile": _profile,
    "arrival": lambda r: (r.arrival.mode, r.arrival.offered_rate) if r.arrival.open_loop else "closed",
    "model": lambda r: r.setup.model,
    "api": lambda r: r.setup.api,
    "host": lambda r: r.setup.host,
    "users": lambda r: r.users_max,
    "ladder": lambda r: r.setup.ladder.to_dict() if r.setup.ladder is not None else None,
    "max_tokens_cap": lambda r: r.setup.max_tokens_cap,
    "ignore_eos": lambda r: r.setup.ignore_eos,
}


@dataclass(frozen=True, slots=True)
class Difference:
    key: str
    baseline: Any
    candidate: Any

    def text(self) -> str:
        if self.key == "profile" and isinstance(self.baseline, dict) and isinstance(self.candidate, dict):
            b, c = self.baseline.get("name"), self.candidate.get("name")
            return f"profile: {b} vs {c}" if b != c else f"profile {b}: its classes differ"
        return f"{self.key}: {self.baseline} vs {self.candidate}"


@dataclass(frozen=True, slots=True)
class Check:
    """One metric of one scope: the two figures, the regression and its 95 % range, the decision and why."""

    scope: str
    metric: str
    limit: float
    baseline: Figure
    candidate: Figure
    status: str
    change: float | None = None
    change_range: tuple[float, float] | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class GateResult:
    status: str
    checks: tuple[Check, ...] = ()
    differences: tuple[Difference, ...] = ()
    limits: Mapping[str, float] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return {PASS: 0, FAIL: 1}.get(self.status, 3)


def comparability(base: RunResult, cand: RunResult, allow: Iterable[str] = ()) -> tuple[Difference, ...]:
    """What differs between the runs among :data:`COMPARED` (a key unknown to either run is not compared)."""
    allowed = set(allow)
    out = []
    for key, read in COMPARED.items():
        b, c = read(base), read(cand)
        if key not in allowed and b is not None and c is not None and b != c:
            out.append(Difference(key, b, c))
    return tuple(out)


def _pct(x: float, metric: str) -> str:
    return f"{x * 100:+.2g} pt" if metric == "error_rate" else f"{x * 100:+.1f} %"


def _more(b: Figure, c: Figure, d: float, noise_b: float, noise_c: float) -> str:
    """How many more samples would decide, with the range ``d`` away from the limit (in the judged scale)."""
    unit = "repetitions" if b.runs or c.runs else "requests"
    if abs(d) < 1e-9:
        return "the change sits at the limit itself: more samples will not decide it"
    if abs(d) > noise_b and noise_c > 0:  # the candidate alone can decide
        k = (noise_c / (abs(d) - noise_b)) ** 2
        if k <= _MAX_FACTOR:
            return f"about {max(1, math.ceil(c.n * (k - 1)))} more {unit} in the candidate would decide (n={c.n})"
    k = ((noise_b + noise_c) / abs(d)) ** 2
    if k > _MAX_FACTOR:
        return f"more than {_MAX_FACTOR:g}x the {unit} would be needed to decide"
    return (f"about {k:.1f}x the {unit} would decide: ~{math.ceil(c.n * (k - 1))} more in the candidate (n={c.n}), "
            f"~{math.ceil(b.n * (k - 1))} more in the baseline (n={b.n})")  # fmt: skip


def _too_few(side: str, f: Figure, scope: str, metric: str) -> str:
    pct = metric.rpartition("_")[2]
    if f.runs:
        return f"{side}: {f.n} repetitions give no spread for {scope} {metric}"
    if f.need is not None:
        return (f"{side}: {f.n} requests of {scope}, a {pct} interval needs at least {f.need}: "
                f"{f.need - f.n} more requests would give one")  # fmt: skip
    return f"{side}: no interval for {scope} {metric} (a summary from before llmload wrote ci95)"


def judge(scope: str, metric: str, limit: float, b: Figure, c: Figure, strict_tails: bool = False) -> Check:
    """One metric's decision (module docstring); ``strict_tails``: a single run's p90/p99 may FAIL too."""
    check = lambda status, **kw: Check(scope, metric, limit, b, c, status, **kw)  # noqa: E731
    if b.value is None or c.value is None:
        side = "candidate" if c.value is None else "baseline"
        return check(INCONCLUSIVE, reason=f"{side}: no {metric} for {scope} (no successful request)")
    absolute = metric == "error_rate"
    t: Callable[[float], float] = (lambda x: x) if absolute else (lambda x: math.log(max(x, 1e-12)))
    change = c.value - b.value if absolute else c.value / b.value - 1 if b.value > 0 else None
    if change is None:
        return check(INCONCLUSIVE, reason=f"baseline {metric} is 0")
    missing = [_too_few(side, f, scope, metric) for side, f in (("candidate", c), ("baseline", b)) if f.interval is None]
    ci_c, ci_b = c.interval, b.interval
    if missing or ci_c is None or ci_b is None:  # (both intervals are known once nothing is missing)
        return check(INCONCLUSIVE, change=change, reason="; ".join(missing))
    (c_lo, c_hi), (b_lo, b_hi) = ci_c, ci_b
    lim = limit if absolute else math.log1p(limit)
    d = t(c.value) - t(b.value) - lim
    up_c, up_b = t(c.value) - t(c_lo), t(b_hi) - t(b.value)  # the noise that could lower the regression
    dn_c, dn_b = t(c_hi) - t(c.value), t(b.value) - t(b_lo)  # ... or raise it
    lo_, hi_ = (c_lo - b_hi, c_hi - b_lo) if absolute else (c_lo / b_hi - 1, c_hi / b_lo - 1)
    rng = (lo_, hi_)
    shown = f"{_pct(change, metric)} ({_pct(lo_, metric)} .. {_pct(hi_, metric)}), limit {limit_text(metric, limit)}"
    soft_tail = metric.endswith(("_p90", "_p99")) and not strict_tails and not (b.runs and c.runs)
    if d > up_c + up_b:
        if soft_tail:
            return check(INCONCLUSIVE, change=change, change_range=rng, reason=(
                f"regressed {shown}: beyond this run's sampling noise, but a single run's tail also moves with the "
                "machine's load and the server's state: confirm with --repeat N (run-to-run spread), or judge it "
                "with --strict-tails on a quiet machine"))  # fmt: skip
        return check(FAIL, change=change, change_range=rng, reason=f"regressed {shown}: beyond the noise")
    if -d >= dn_c + dn_b:
        return check(PASS, change=change, change_range=rng, reason=f"{shown}")
    half = lambda f: max(f.hi - f.value, f.value - f.lo) / (1.0 if absolute else f.value)  # noqa: E731
    if change <= limit and half(b) <= limit / 2 and half(c) <= limit / 2:
        return check(PASS, change=change, change_range=rng, reason=f"{shown}: within the limit, noise below half of it")
    noise_b, noise_c = (up_b, up_c) if d > 0 else (dn_b, dn_c)
    why = "over the limit within the noise" if change > limit else "the range reaches over the limit"
    more = _more(b, c, d, noise_b, noise_c)
    if soft_tail and d > 0:  # more samples would only lead to a single run's tail regression: not a FAIL either
        more = "a single run's tail does not FAIL: confirm with --repeat N, or judge it with --strict-tails"
    return check(INCONCLUSIVE, change=change, change_range=rng, reason=f"{shown}: {why}; {more}")


def decide(
    base: RunResult, cand: RunResult, limits: Mapping[str, float], allow: Iterable[str] = (), strict_tails: bool = False
) -> GateResult:
    """The gate over every scope both runs have (module docstring)."""
    diffs = comparability(base, cand, allow)
    b_scopes, c_scopes = scopes_of(base), scopes_of(cand)
    reasons = [f"not comparable: {d.text()}" for d in diffs]
    only = sorted(set(b_scopes) ^ set(c_scopes))
    if only:
        reasons.append(f"classes in one run only (not compared): {', '.join(only)}")
    checks = []
    for scope in [s for s in b_scopes if s in c_scopes]:
        for metric, limit in limits.items():
            b, c = figure_of(base, scope, metric), figure_of(cand, scope, metric)
            if b is None or c is None or (b.value is None and c.value is None):
                continue
            checks.append(judge(scope, metric, limit, b, c, strict_tails))
    failed = [c for c in checks if c.status == FAIL]
    unsure = [c for c in checks if c.status == INCONCLUSIVE]
    reasons += [f"{c.scope} {c.metric}: {c.reason}" for c in failed + unsure]
    status = INCONCLUSIVE if diffs or not checks else FAIL if failed else INCONCLUSIVE if unsure else PASS
    if not checks:
        reasons.append("nothing to compare (no metric with samples in both runs)")
    return GateResult(status, tuple(checks), diffs, dict(limits), tuple(reasons))
