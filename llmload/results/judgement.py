"""What the analysis concluded, typed: the baseline it chose, the verdict, the findings.

:mod:`llmload.analysis` computes a :class:`Judgement` from a
:class:`~llmload.results.model.RunResult`; the writers and the loader turn it into and
from the summary's ``baseline``/``verdict``/``findings`` keys (schema in
docs/summary-schema.md; formulas in docs/diagnosis.md). Values are kept as computed;
``to_dict`` rounds (limits to µs, breach figures to 4 decimals, ratios to 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.jsonvalue import Json
from llmload.results.setup import DEFAULT_DEGRADATION, DEFAULT_SLO_ATTAINMENT

__all__ = [
    "BaselineRef",
    "Breach",
    "Confidence",
    "Finding",
    "Judgement",
    "PassVerdict",
    "SloPass",
    "SloVerdict",
    "Verdict",
]


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def _limits(limits: Mapping[str, float | None] | None) -> dict[str, float | None] | None:
    return None if limits is None else {k: _r(v) for k, v in limits.items()}


@dataclass(frozen=True, slots=True)
class Breach:
    """The first ladder step that broke a limit, and by how much (``also``: the other limits it broke)."""

    step: int | None  # None only in a hand-made summary
    users: int
    metric: str  # "ttft_p50", "tpot_p99", "error_rate", ...
    value: float | None
    limit: float | None
    baseline: float | None
    ratio: float | None
    also: tuple[str, ...] = ()
    rate: float | None = None  # a rate ladder: the step's offered rate (requests/s)

    def to_dict(self) -> dict[str, Json]:
        out: dict[str, Json] = {
            "step": self.step, "users": self.users, "metric": self.metric, "value": _r(self.value, 4),
            "limit": _r(self.limit, 4), "baseline": _r(self.baseline, 4), "ratio": _r(self.ratio, 3),
            "also": list(self.also)}  # fmt: skip
        if self.rate is not None:
            out["rate"] = self.rate
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Breach | None:
        if not d:
            return None
        return cls(d.get("step"), int(d.get("users") or 0), str(d.get("metric") or ""), d.get("value"),
                   d.get("limit"), d.get("baseline"), d.get("ratio"), tuple(d.get("also") or ()), d.get("rate"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class PassVerdict:
    """One judgement over the ladder (the p99 variant, or one request class): ``limits`` None = not judged."""

    status: str
    limits: Mapping[str, float | None] | None
    safe_step: int | None
    safe_users: int | None
    breach: Breach | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Json]:
        out: dict[str, Json] = {"status": self.status}
        if self.limits is not None:
            out["limits"] = _limits(self.limits)
        out.update(safe_step=self.safe_step, safe_users=self.safe_users,
                   breach=self.breach.to_dict() if self.breach else None)  # fmt: skip
        if self.note is not None:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> PassVerdict | None:
        if not d:
            return None
        return cls(str(d.get("status") or ""), d.get("limits"), d.get("safe_step"), d.get("safe_users"),
                   Breach.from_dict(d.get("breach")), d.get("note"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class Confidence:
    """The safe level judged at both ends of the p50 intervals: ``[low, high]`` users and step indices."""

    band_users: tuple[int | None, int | None] = (None, None)
    band_steps: tuple[int | None, int | None] = (None, None)
    method: str = ""
    note: str = ""

    def to_dict(self) -> dict[str, Json]:
        return {"band_users": list(self.band_users), "band_steps": list(self.band_steps), "method": self.method,
                "note": self.note}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Confidence:
        d = d or {}
        pair = lambda v: (tuple(v) + (None, None))[:2] if v else (None, None)  # noqa: E731
        return cls(pair(d.get("band_users")), pair(d.get("band_steps")), str(d.get("method") or ""),
                   str(d.get("note") or ""))  # fmt: skip


@dataclass(frozen=True, slots=True)
class SloPass:
    """The SLO judgement of all classes or one (:mod:`llmload.analysis.slo_verdict`).

    Ladder: ``status`` ok | breach | insufficient_data, ``safe_*`` the largest step before the
    first one below the target, ``failed_*`` that step, ``failed_slo`` the SLO most of its
    requests missed (``errors`` when failed requests were the larger part). Without a ladder:
    ``status`` met | missed over the whole run (``failed_slo`` set when missed).
    """

    status: str
    attainment: float | None = None  # of the safe step (ladder) or of the run
    safe_step: int | None = None
    safe_users: int | None = None
    failed_step: int | None = None
    failed_users: int | None = None
    failed_attainment: float | None = None
    failed_slo: str | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Json]:
        out: dict[str, Json] = {
            "status": self.status, "attainment": _r(self.attainment, 4), "safe_step": self.safe_step,
            "safe_users": self.safe_users, "failed_step": self.failed_step, "failed_users": self.failed_users,
            "failed_attainment": _r(self.failed_attainment, 4), "failed_slo": self.failed_slo}  # fmt: skip
        if self.note is not None:
            out["note"] = self.note
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SloPass:
        return cls(str(d.get("status") or ""), d.get("attainment"), d.get("safe_step"), d.get("safe_users"),
                   d.get("failed_step"), d.get("failed_users"), d.get("failed_attainment"), d.get("failed_slo"),
                   d.get("note"))  # fmt: skip


@dataclass(frozen=True, slots=True)
class SloVerdict:
    """The verdict's ``slo``: the attainment target, the SLOs per class, and the judgement overall and per class."""

    target: float
    slos: Mapping[str, Mapping[str, float]]
    overall: SloPass
    per_class: Mapping[str, SloPass] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Json]:
        return {"target": self.target, "slos": {n: dict(v) for n, v in self.slos.items()},
                "overall": self.overall.to_dict(), "per_class": {n: p.to_dict() for n, p in self.per_class.items()}}  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> SloVerdict | None:
        if not d:
            return None
        return cls(float(d.get("target") or DEFAULT_SLO_ATTAINMENT), {str(n): dict(v) for n, v in (d.get("slos") or {}).items()},
                   SloPass.from_dict(d.get("overall") or {}),
                   {str(n): SloPass.from_dict(v) for n, v in (d.get("per_class") or {}).items()})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Verdict:
    """The safe-concurrency verdict. Statuses: ok, breach, inconclusive (ok or breach on too little evidence:
    ``inconclusive`` says why), insufficient_data, no_baseline, no_ladder."""

    status: str
    note: str
    degradation: float
    limits: Mapping[str, float | None] | None = None
    safe_step: int | None = None
    safe_users: int | None = None
    top_users: int | None = None
    steps_judged: int = 0
    breach: Breach | None = None
    p99: PassVerdict | None = None
    confidence: Confidence = field(default_factory=Confidence)
    recommended_limit: int | None = None
    recommended_note: str = ""
    per_class: Mapping[str, PassVerdict] = field(default_factory=dict)
    baseline_note: str | None = None
    slo: SloVerdict | None = None  # runs with SLOs only
    inconclusive: Mapping[str, Any] | None = None  # {"judged_status", "reasons", "samples", "change"}
    safe_rate: float | None = None  # a rate ladder: the safe step's offered rate (requests/s)
    rate_ladder: bool = False
    recommended_rate: float | None = None  # a rate ladder: the offered rate of the recommended limit's step

    def to_dict(self) -> dict[str, Json]:
        out: dict[str, Json] = {
            "status": self.status,
            "note": self.note,
            "degradation": self.degradation,
            "limits": _limits(self.limits),
            "safe_step": self.safe_step,
            "safe_users": self.safe_users,
            "top_users": self.top_users,
            "steps_judged": self.steps_judged,
            "breach": self.breach.to_dict() if self.breach else None,
            "p99": self.p99.to_dict() if self.p99 else None,
            "confidence": self.confidence.to_dict(),
            "recommended_limit": self.recommended_limit,
            "recommended_note": self.recommended_note,
            "per_class": {name: p.to_dict() for name, p in self.per_class.items()},
        }
        if self.baseline_note is not None:
            out["baseline_note"] = self.baseline_note
        if self.slo is not None:
            out["slo"] = self.slo.to_dict()
        out["inconclusive"] = dict(self.inconclusive) if self.inconclusive is not None else None
        if self.rate_ladder:
            out["safe_rate"] = self.safe_rate
            out["recommended_rate"] = self.recommended_rate
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        return cls(
            status=str(d.get("status") or ""),
            note=str(d.get("note") or ""),
            degradation=float(d.get("degradation") or DEFAULT_DEGRADATION),
            limits=d.get("limits"),
            safe_step=d.get("safe_step"),
            safe_users=d.get("safe_users"),
            top_users=d.get("top_users"),
            steps_judged=int(d.get("steps_judged") or 0),
            breach=Breach.from_dict(d.get("breach")),
            p99=PassVerdict.from_dict(d.get("p99")),
            confidence=Confidence.from_dict(d.get("confidence")),
            recommended_limit=d.get("recommended_limit"),
            recommended_note=str(d.get("recommended_note") or ""),
            per_class={str(n): p for n, v in (d.get("per_class") or {}).items() if (p := PassVerdict.from_dict(v))},
            baseline_note=d.get("baseline_note"),
            slo=SloVerdict.from_dict(d.get("slo")),
            inconclusive=d.get("inconclusive") if isinstance(d.get("inconclusive"), Mapping) else None,
            safe_rate=d.get("safe_rate"),
            rate_ladder="safe_rate" in d,
            recommended_rate=d.get("recommended_rate"),
        )


@dataclass(slots=True)
class Finding:
    """One diagnosed cause: which layer, how sure, the numbers that fired it, and what to change.

    ``explains`` names the verdict metrics it accounts for (``"ttft"``, ``"tpot"``,
    ``"errors"``); the ranking puts findings that explain the metric that breached first.
    """

    id: str
    layer: str
    title: str
    confidence: str
    evidence: dict[str, Json]
    evidence_text: list[str]
    change: str
    step: int | None = None
    users: int | None = None
    explains: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Json]:
        """The summary's form: evidence without unknown (None) values, floats to 4 decimals."""
        evidence = {k: round(v, 4) if isinstance(v, float) else v for k, v in self.evidence.items() if v is not None}
        return {
            "id": self.id,
            "layer": self.layer,
            "title": self.title,
            "confidence": self.confidence,
            "evidence": evidence,
            "evidence_text": self.evidence_text,
            "change": self.change,
            "step": self.step,
            "users": self.users,
            "explains": list(self.explains),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        return cls(str(d.get("id") or ""), str(d.get("layer") or ""), str(d.get("title") or ""),
                   str(d.get("confidence") or ""), dict(d.get("evidence") or {}), list(d.get("evidence_text") or []),
                   str(d.get("change") or ""), d.get("step"), d.get("users"), tuple(d.get("explains") or ()))  # fmt: skip


@dataclass(frozen=True, slots=True)
class BaselineRef:
    """The step every other step is compared with, and where it came from ("pre-run", "step", "lowest-step")."""

    step: int
    source: str


@dataclass(frozen=True, slots=True)
class Judgement:
    """The analysis of one run: baseline (None without one), verdict, findings (most likely first)."""

    baseline: BaselineRef | None
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
