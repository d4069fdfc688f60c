"""The check of a prediction: a predicted run scored against a real run of the same workload.

:func:`check` sets a predicted :class:`~llmload.results.model.RunResult` beside a measured
one, per ladder step (the steady window; the whole run without a ladder) and class ("(all)":
every class): TTFT and TPOT p50/p99, successful requests/s and output tokens/s, measured,
predicted and the relative error ``predicted / measured - 1``; and whether the safe level
(the safe-concurrency verdict's, and the SLO verdict's where both runs had SLOs) matched.
The steps must be the same loads (users, or offered rate), else the runs are not the same
workload (one error line). :func:`check_table` prints it, :func:`check_doc` is its JSON.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass

from llmload.errors import ConfigError
from llmload.jsonvalue import Json
from llmload.results.model import RunResult, Stats

__all__ = ["Check", "Figure", "Row", "check", "check_doc", "check_table"]

#: (name, how to read it from Stats)
FIGURES = (
    ("ttft_p50_ms", lambda s: s.lat("ttft").p50),
    ("ttft_p99_ms", lambda s: s.lat("ttft").p99),
    ("tpot_p50_ms", lambda s: s.lat("tpot").p50),
    ("tpot_p99_ms", lambda s: s.lat("tpot").p99),
    ("ok_per_s", lambda s: s.requests_per_s if s.ok else None),
    ("output_tokens_per_s", lambda s: s.output_tokens_per_s if s.ok else None),
)


@dataclass(frozen=True, slots=True)
class Figure:
    measured: float | None
    predicted: float | None
    error: float | None  # predicted / measured - 1 (None when either is missing or measured is 0)


@dataclass(frozen=True, slots=True)
class Row:
    step: int | None  # None: the whole run (no ladder)
    load: str  # "8 users", "4 req/s", "run"
    cls: str  # a class, or "(all)"
    n_measured: int  # successful requests measured
    n_predicted: int
    figures: dict[str, Figure]


@dataclass(frozen=True, slots=True)
class Level:
    """A safe level: what the measured and the predicted verdict say (e.g. ``8 users (ok)``) and if they agree."""

    kind: str  # "safe concurrency" | "SLO"
    measured: str
    predicted: str
    matched: bool


@dataclass(frozen=True, slots=True)
class Check:
    rows: tuple[Row, ...]
    levels: tuple[Level, ...]
    worst_p50: tuple[float, Row | None]  # the largest |error| of a class's TTFT/TPOT p50, and its row


def _figure(m: float | None, p: float | None) -> Figure:
    err = p / m - 1.0 if m and p is not None else None
    return Figure(m, p, None if err is None else round(err, 4))


def _pairs(predicted: RunResult, measured: RunResult) -> Iterator[tuple[int | None, str, Stats, Stats, str]]:
    """(step, load, measured stats, predicted stats, class) for every step and class both runs have."""
    ms, ps = [s for s in measured.steps if s.index >= 0], [s for s in predicted.steps if s.index >= 0]
    loads = lambda steps: [s.label for s in steps]  # noqa: E731
    if bool(ms) != bool(ps) or loads(ms) != loads(ps):
        said = lambda steps: ", ".join(loads(steps)) or "no ladder"  # noqa: E731
        raise ConfigError(f"the measured run's steps ({said(ms)}) are not the prediction's ({said(ps)}): "
                          "predict the workload the measured run ran")  # fmt: skip
    spans: list[tuple[int | None, str, Stats, Stats, Mapping[str, Stats], Mapping[str, Stats]]]
    spans = [(m.index, m.label, m.overall, p.overall, m.classes, p.classes) for m, p in zip(ms, ps, strict=True)]
    if not ms:
        spans = [(None, "run", measured.overall, predicted.overall, measured.classes, predicted.classes)]
    for step, load, mo, po, mc, pc in spans:
        yield step, load, mo, po, "(all)"
        for name in mc:
            if name in pc:
                yield step, load, mc[name], pc[name], name


def _at(r: RunResult, step: int | None) -> str:
    label = next((s.label for s in r.steps if s.index == step), None) if step is not None else None
    return label or "none"


def _level(r: RunResult) -> str:
    """The safe-concurrency verdict's level, e.g. ``8 users (ok)``, ``4 req/s (breach)``; ``-`` when not judged."""
    v = r.judgement.verdict if r.judgement is not None else None
    return "-" if v is None else f"{_at(r, v.safe_step)} ({v.status})"


def _slo_level(r: RunResult) -> str | None:
    """The SLO verdict's level (None: the run had no SLOs)."""
    v = r.judgement.verdict if r.judgement is not None else None
    if v is None or v.slo is None:
        return None
    o = v.slo.overall
    return f"{_at(r, o.safe_step)} ({o.status})" if r.steps else o.status


def _same(a: str, b: str) -> bool:
    return a.split(" (")[0] == b.split(" (")[0]


def check(predicted: RunResult, measured: RunResult) -> Check:
    rows = []
    for step, load, m, p, cls in _pairs(predicted, measured):
        rows.append(Row(step, load, cls, m.ok, p.ok, {name: _figure(get(m), get(p)) for name, get in FIGURES}))
    levels = [
        Level("safe concurrency", _level(measured), _level(predicted), _same(_level(measured), _level(predicted)))
    ]
    ms, ps = _slo_level(measured), _slo_level(predicted)
    if ms is not None and ps is not None:
        levels.append(Level("SLO", ms, ps, _same(ms, ps)))
    worst: tuple[float, Row | None] = (0.0, None)
    for r in rows:
        if r.cls == "(all)" and any(x.cls != "(all)" for x in rows if x.step == r.step):
            continue  # a mix's overall median jumps between its classes' modes: the classes' rows judge it
        for key in ("ttft_p50_ms", "tpot_p50_ms"):
            e = r.figures[key].error
            if e is not None and abs(e) > worst[0]:
                worst = (abs(e), r)
    return Check(tuple(rows), tuple(levels), worst)


def _cell(f: Figure, digits: int = 1) -> str:
    if f.measured is None or f.predicted is None:
        return f"{'-':>24}"
    err = f"{100 * f.error:+6.1f} %" if f.error is not None else "     - "
    return f"{f.measured:>8.{digits}f} / {f.predicted:>8.{digits}f} ({err})"


def check_table(c: Check) -> list[str]:
    """The table: per step and class, measured / predicted (error) of each figure; then the safe levels."""
    out = ["step load         class        n meas  TTFT p50 meas / pred (err)       TTFT p99 err  "
           "TPOT p50 meas / pred (err)       TPOT p99 err  ok req/s err  out tok/s err"]  # fmt: skip
    for r in c.rows:
        f = r.figures
        errs = [f[k].error for k in ("ttft_p99_ms", "tpot_p99_ms", "ok_per_s", "output_tokens_per_s")]
        e = [f"{100 * x:+7.1f} %" if x is not None else f"{'-':>9}" for x in errs]
        step = "-" if r.step is None else str(r.step)
        out.append(f"{step:>4} {r.load:<12} {r.cls:<12} {r.n_measured:>6}  {_cell(f['ttft_p50_ms'])}  {e[0]:>12}  "
                   f"{_cell(f['tpot_p50_ms'])}  {e[1]:>12}  {e[2]:>12}  {e[3]:>13}")  # fmt: skip
    for lv in c.levels:
        out.append(f"{lv.kind} level measured: {lv.measured}, predicted: {lv.predicted}: "
                   f"{'matched' if lv.matched else 'DIFFERS'}")  # fmt: skip
    worst, row = c.worst_p50
    if row is not None:
        out.append(f"worst |error| of a TTFT/TPOT p50: {100 * worst:.1f} % (step {row.load}, class {row.cls})")
    return out


def check_doc(c: Check, predicted_from: str, measured_from: str) -> dict[str, Json]:
    """The check as JSON: ``rows`` (each figure measured, predicted, error), ``levels``, ``worst_p50_error``."""
    worst, row = c.worst_p50
    return {
        "schema": "llmload.predict-check/1",
        "predicted": predicted_from,
        "measured": measured_from,
        "rows": [
            {
                "step": r.step,
                "load": r.load,
                "class": r.cls,
                "n_measured": r.n_measured,
                "n_predicted": r.n_predicted,
                **{k: asdict(v) for k, v in r.figures.items()},
            }
            for r in c.rows
        ],  # fmt: skip
        "levels": [asdict(lv) for lv in c.levels],
        "worst_p50_error": round(worst, 4),
        "worst_p50_at": None if row is None else {"step": row.step, "load": row.load, "class": row.cls},
    }
