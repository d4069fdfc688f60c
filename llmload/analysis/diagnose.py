"""Run the rule table over a run and rank what fires: the most likely bottleneck first.

Every rule of :data:`~llmload.analysis.rules.RULES` runs unless a signal source it
*needs* is missing from the run (no engine or GPU metrics in the steady windows); then it
is skipped, and one ``not_enough_signals`` finding says which sources are missing, which
rules could not run and which ran with lower confidence — the diagnosis does not guess a
server-side cause from client numbers alone. Client-only rules (errors, a saturated load
generator) always run.

Ranking (highest first)::

    score = 30 | 20 | 10            confidence high | medium | low
          + 3                       the finding explains the metric that breached first (verdict.breach.metric)
          + 1                       it fired at the breach step itself

ties broken by the order of the rule table (more specific rules first).
``target_unreachable`` (nearly every request failed) and ``rate_limited`` (most were refused
with HTTP 429) always come first, and then no ``load_generator_saturated``: a client that
ran hot sending failures says nothing about the server. Otherwise ``load_generator_saturated`` comes first (it invalidates the rest) and
``not_enough_signals`` last (it is not a bottleneck).
"""

from __future__ import annotations

from llmload.analysis.findings import Context, Finding
from llmload.analysis.rules import RULES

__all__ = ["NOT_ENOUGH_SIGNALS", "RUN_FAILED", "diagnose", "rank"]

NOT_ENOUGH_SIGNALS = "not_enough_signals"
TARGET_UNREACHABLE = "target_unreachable"
#: Findings that say the run measured a failing or refusing target, not its capacity: ranked first.
RUN_FAILED = frozenset({TARGET_UNREACHABLE, "rate_limited"})
_CONFIDENCE_SCORE = {"high": 30, "medium": 20, "low": 10}
_SOURCE_TEXT = {
    "server": "no engine metrics in the steady windows (--engine-metrics not given, or the endpoint did not answer)",
    "gpu": "no GPU metrics in the steady windows (--gpu-metrics not given, or the exporter did not answer)",
}
#: What to add for a missing source: only the ones missing are named (a run with --engine-metrics was told to add it).
_SOURCE_FLAG = {
    "server": "--engine-metrics http://<engine>:8000/metrics",
    "gpu": "--gpu-metrics http://<gpu-host>:9401/metrics (llmload gpu-sidecar, dcgm-exporter, or the simulator's own /metrics)",
}


def _score(f: Finding, ctx: Context) -> int:
    if f.id in RUN_FAILED:
        return 2000
    if f.id == "load_generator_saturated":
        return 1000
    if f.id == NOT_ENOUGH_SIGNALS:
        return -1000
    score = _CONFIDENCE_SCORE.get(f.confidence, 0)
    if ctx.binding is not None and ctx.binding in f.explains:
        score += 3
    if ctx.breach is not None and f.step is not None and f.step == ctx.breach.step:
        score += 1
    return score


def rank(findings: list[Finding], ctx: Context) -> list[Finding]:
    """Most likely first (module docstring)."""
    order = {r.rule_id: i for i, r in enumerate(RULES)}  # type: ignore[attr-defined]
    return sorted(findings, key=lambda f: (-_score(f, ctx), order.get(f.id, len(order))))


def _not_enough(missing: set[str], skipped: dict[str, list[str]], reduced: dict[str, list[str]]) -> Finding:
    text = [_SOURCE_TEXT[m] for m in ("server", "gpu") if m in missing]
    if skipped:
        text.append("rules not evaluated: " + ", ".join(skipped))
    if reduced:
        text.append(
            "rules run at lower confidence, without "
            + " and ".join(m for m in ("server", "gpu") if m in missing)
            + ": "
            + ", ".join(reduced)
        )
    return Finding(
        NOT_ENOUGH_SIGNALS, "data", "Not enough signals to diagnose the server", "high",
        evidence={"server_signals": "server" not in missing, "gpu_signals": "gpu" not in missing,
                  "rules_skipped": len(skipped), "rules_reduced": len(reduced)},
        evidence_text=text,
        change="Run again with " + " and ".join(_SOURCE_FLAG[m] for m in ("server", "gpu") if m in missing)
        + ": client latencies alone cannot tell a batch cap from a full KV cache or a bandwidth-bound decode.",
    )  # fmt: skip


def diagnose(ctx: Context) -> list[Finding]:
    """Every rule that can run, its findings ranked, plus ``not_enough_signals`` when sources are missing."""
    available = ctx.sources
    missing = {"server", "gpu"} - available
    findings: list[Finding] = []
    skipped: dict[str, list[str]] = {}
    reduced: dict[str, list[str]] = {}
    for r in RULES:
        rid = r.rule_id  # type: ignore[attr-defined]
        lacking = sorted(r.needs - available)  # type: ignore[attr-defined]
        if lacking:
            skipped[rid] = lacking
            continue
        findings += r(ctx)
        wanted = sorted(r.wants - available)  # type: ignore[attr-defined]
        if wanted:
            reduced[rid] = wanted
    if any(f.id in RUN_FAILED for f in findings):
        findings = [f for f in findings if f.id != "load_generator_saturated"]
    if missing:
        findings.append(_not_enough(missing, skipped, reduced))
    return rank(findings, ctx)
