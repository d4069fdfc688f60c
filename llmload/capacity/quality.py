"""The fit's quality: the measured requests replayed on the fitted model, compared per step and class.

Every measured request arrives in the replay when it was sent (an open loop,
:func:`~llmload.sim.virtual.replay`), or, in a closed loop, when its user's previous request
ended in the replay (:mod:`llmload.capacity.chains`), with its measured prompt and output
lengths; per ladder step (its steady window) and
class, TTFT and TPOT p50/p90 measured vs replayed, and the relative error.
"""

from __future__ import annotations

import numpy as np

from llmload.capacity.chains import replay_closed
from llmload.capacity.measured import Measured
from llmload.jsonvalue import Json
from llmload.sim.params import EngineParams
from llmload.sim.virtual import Arrival, replay

__all__ = ["fit_quality", "worst_error"]


def _pct(xs: list[float], q: float) -> float | None:
    return float(np.percentile(xs, q)) if xs else None


def fit_quality(m: Measured, params: EngineParams) -> list[dict[str, Json]]:
    if m.closed_loop:  # each user's next request follows its last one, as it did
        outcomes = replay_closed(params, m.reqs)
    else:
        arrivals = [Arrival(r.start, max(r.input, 1), r.output, str(i)) for i, r in enumerate(m.reqs)]
        outcomes, _ = replay(params, arrivals)
    by_tag = {o.arrival.tag: o for o in outcomes}
    rows = []
    for st in m.steps:
        groups: dict[str, list[int]] = {}
        for i, r in enumerate(m.reqs):
            if st.steady <= r.start < st.end and r.complete:
                groups.setdefault(r.cls, []).append(i)
                groups.setdefault("(all)", []).append(i)
        for cls, idx in sorted(groups.items()):
            row: dict[str, Json] = {"step": st.index, "users": st.users, "class": cls, "requests": len(idx)}
            if st.rate is not None:
                row["rate"] = st.rate
            for metric in ("ttft", "tpot"):
                meas = [getattr(m.reqs[i], metric) * 1000 for i in idx if metric == "ttft" or m.reqs[i].output > 1]
                outs = [by_tag[str(i)] for i in idx if by_tag[str(i)].token_times]
                rep = [getattr(o, metric) * 1000 for o in outs if metric == "ttft" or len(o.token_times) > 1]
                for q in (50, 90):
                    a, b = _pct(meas, q), _pct(rep, q)
                    row[f"{metric}_p{q}_ms"] = None if a is None else round(a, 2)
                    row[f"{metric}_p{q}_replayed_ms"] = None if b is None else round(b, 2)
                    row[f"{metric}_p{q}_error"] = round((b - a) / a, 4) if a and b is not None else None
            rows.append(row)
    return rows


def worst_error(rows: list[dict[str, Json]], key: str = "p50") -> float:
    """The largest |relative error| of TTFT/TPOT ``key`` over the per-class rows (a mix's overall median
    of TTFT falls between its classes' modes and jumps from one to the other on a few requests)."""
    errs = [abs(e) for r in rows if r["class"] != "(all)" for m in ("ttft", "tpot")
            if isinstance(e := r.get(f"{m}_{key}_error"), (int, float))]  # fmt: skip
    return max(errs) if errs else 0.0
