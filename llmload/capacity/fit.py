"""Fit the engine model's parameters (:class:`~llmload.sim.params.EngineParams`) to a measured run.

The step cost (:mod:`llmload.sim.cost`) is linear in its parameters, so one weighted least
squares (numpy) recovers them from per-request timing:

* every decode (TPOT) row: ``tpot = A + B*n + C*ctx + D*p`` with ``n`` the sequences decoding
  beside it, ``ctx`` their KV tokens and ``p`` the prompt tokens prefilled per decode step
  meanwhile (:mod:`llmload.capacity.features`);
* every prefill (TTFT) row of a request that did not queue: ``s*(A + B*n + C*ctx) + D*input``
  over its ``s`` prefill chunks, ``input`` the prompt tokens computed (those the server's prefix
  cache served excluded: a conversation's turn re-sends its history), plus, when the server sent
  no phases, the step it waited for: a whole one when its user sent it as the previous one ended
  (that came as a step ended), half after a think or tool time, for a user's first request and
  in an open loop (a random point of a step);

where ``A = host_overhead + step_base``, ``B = per_seq``, ``C = per_kv_token`` and
``D = 1/prefill_tps``. Rows are weighted by 1/target (relative errors). ``A`` alone cannot be
split into host and GPU time from latencies: host_overhead stays the default (assumed) and
step_base takes the rest. The admission cap (``max_num_seqs``) is measured as the peak of the
running batch when requests queued, else it stays assumed (at least the peak seen). Prefix
caching is measured on when the server reported cached prompt tokens, off when conversation
turns re-sent their history and it reported none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from llmload.capacity.chains import chains
from llmload.capacity.features import Columns, decode_features, decoding_at, in_flight_at, prefill_features, running_at
from llmload.capacity.kv import kv_param
from llmload.capacity.measured import Measured
from llmload.capacity.param import Param
from llmload.errors import ConfigError
from llmload.sim.params import EngineParams

__all__ = ["Fit", "Param", "fit_measured"]

_AT_ONCE_S = 0.005  # a next request sent within this of its user's last one ended came as a step ended


@dataclass(frozen=True, slots=True)
class Fit:
    params: EngineParams
    provenance: tuple[Param, ...]
    rows: int
    rel_rms: float  # relative RMS residual of the least squares
    max_concurrency: int
    max_input: int
    max_output: int
    warnings: tuple[str, ...]


def _queued(m: Measured, c: Columns, a_guess: float) -> np.ndarray:
    """Which requests waited for admission (server queue time > 2 steps; else unknown -> False)."""
    if c.has_queue:
        q = np.array([r.queue_s for r in m.reqs], dtype=float)
        return q > 2 * a_guess
    return np.zeros(len(m.reqs), dtype=bool)


def _cap(m: Measured, c: Columns, queued: np.ndarray, base: EngineParams) -> tuple[Param, int | None]:
    grid = np.sort(np.concatenate([c.admitted, c.first])) + 1e-6
    peak_flight = int(in_flight_at(c, grid).max()) if len(grid) else 0
    running, waiting = m.gauges.get("running") or [], m.gauges.get("waiting") or []
    full = [r for r, w in zip(running, waiting, strict=False) if w and w > 0 and r is not None]
    if len(full) >= 3:
        cap = int(round(float(np.median(full))))
        return Param("max_num_seqs", cap, "measured",
                     note=f"engine gauge: requests running while some waited ({len(full)} scrapes)"), cap  # fmt: skip
    if queued.sum() >= 3:  # while a request waits, the batch is full: its size is the cap
        mid = (c.start[queued] + c.admitted[queued]) / 2
        cap = int(round(float(np.median(running_at(c, mid)))))
        return Param("max_num_seqs", cap, "measured",
                     note=f"the running batch while {int(queued.sum())} requests queued (median)"), cap  # fmt: skip
    if not c.has_queue:  # no server phases: while requests wait, those between first and last token fill the batch
        dec = decoding_at(c, grid)
        waiting = in_flight_at(c, grid) - dec >= 2
        if waiting.mean() > 0.1 and peak_flight > int(dec.max()):
            cap = int(round(float(np.percentile(dec[waiting], 90))))
            return Param("max_num_seqs", cap, "measured",
                         note=f"requests between first and last token while others waited ({peak_flight} in flight "
                         "at most)"), cap  # fmt: skip
    value = max(base.max_num_seqs, peak_flight)
    return Param("max_num_seqs", value, "assumed",
                 note=f"no request queued (at most {peak_flight} in flight): the cap is >= {peak_flight}; "
                 "a step with more users than the cap, or server queue times (vllm:num_requests_waiting > 0), "
                 "would pin it"), None  # fmt: skip


def _sent_at_once(m: Measured) -> np.ndarray:
    """Which requests their user sent as its previous one ended (closed loop, within ``_AT_ONCE_S``)."""
    if not m.closed_loop:
        return np.zeros(len(m.reqs), dtype=bool)
    prev = chains(m.reqs)
    return np.array([p is not None and r.start - m.reqs[p].end <= _AT_ONCE_S for r, p in zip(m.reqs, prev, strict=True)],
                    dtype=bool)  # fmt: skip


def _rows(m: Measured, c: Columns, queued: np.ndarray, base: EngineParams) -> tuple[np.ndarray, np.ndarray]:
    """The least squares' rows (regressors ``[A, B, C, D]``) and targets: every decode, every lone prefill."""
    mbt = base.max_batched_tokens
    # a prefill that shared its steps with another's waited for it too: only lone prefills time the prefill
    overlap = (c.admitted[:, None] < c.first[None, :]) & (c.admitted[None, :] < c.first[:, None])
    lone = overlap.sum(axis=1) <= 1  # itself only
    # a busy engine finishes its step first: a closed-loop user's next request, sent at once, comes as a step ends
    # (a whole step); one sent after a think or tool time, a user's first and an open loop's, at a random point (half)
    step_wait = np.where(_sent_at_once(m), 1.0, 0.5)
    rows, target = [], []
    for i, r in enumerate(m.reqs):
        if r.complete and r.output >= 3 and r.last > r.first:
            n, ctx, p = decode_features(c, i)
            rows.append([1.0, n, ctx, p])
            target.append(r.tpot)
        if r.complete and not queued[i] and lone[i] and r.input > 0:
            n, ctx = prefill_features(c, i)
            s = math.ceil(r.prefill / max(mbt - n, 1)) if base.chunked_prefill else 1
            wait = 0.0 if r.prefill_s is not None or n == 0 else step_wait[i]  # an idle engine starts at once
            rows.append([s + wait, (s + wait) * n, (s + wait) * ctx, float(r.prefill)])
            target.append(r.prefill_s if r.prefill_s is not None else r.ttft)
    return np.array(rows), np.array(target)


def fit_measured(m: Measured, base: EngineParams | None = None) -> Fit:
    """The parameters that best explain ``m``; ``base`` supplies what the run cannot pin (default: healthy)."""
    base = base or EngineParams()
    c = Columns(m.reqs)
    a_guess = (base.host_overhead_ms + base.step_base_ms) / 1000.0
    queued = _queued(m, c, a_guess)
    cap_param, cap = _cap(m, c, queued, base)
    if not c.has_queue and cap is not None:  # without server phases: a request that met a full batch queued
        at_start = in_flight_at(c, c.start)
        queued = at_start > cap
    x, y = _rows(m, c, queued, base)
    if len(y) < 8:
        raise ConfigError(f"{m.source}: {len(y)} usable requests; fitting needs at least 8 with 3+ output tokens")
    w = 1.0 / np.maximum(y, 1e-4)
    xw, yw = x * w[:, None], y * w
    cols = [0, 1, 2, 3]
    warnings = []
    # A column without spread (one concurrency, one prompt length) cannot be fitted: hold it at the default.
    defaults = [a_guess, base.per_seq_ms / 1000.0, base.per_kv_token_us / 1e6, 1.0 / base.prefill_tps]
    held = [j for j in (1, 2) if np.ptp(x[:, j]) < 1e-9 * max(1.0, float(np.abs(x[:, j]).max()))]
    if np.ptp(x[:, 1]) < 1.5:  # the batch never grew by two sequences: per_seq is not determined
        held.append(1)
    free = [j for j in cols if j not in held]
    y_adj = yw - sum(xw[:, j] * defaults[j] for j in held)
    coef, *_ = np.linalg.lstsq(xw[:, free], y_adj, rcond=None)
    resid = y_adj - xw[:, free] @ coef
    dof = max(len(y) - len(free), 1)
    s2 = float(resid @ resid) / dof
    try:
        cov = s2 * np.linalg.inv(xw[:, free].T @ xw[:, free])
        se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    except np.linalg.LinAlgError:
        se = np.full(len(free), math.nan)
    est = dict(enumerate(defaults))
    err: dict[int, float] = {}
    for k, j in enumerate(free):
        est[j], err[j] = float(coef[k]), float(se[k])
    for j in (1, 2):  # a physical cost is >= 0; a negative estimate is noise around 0
        if est[j] < 0:
            warnings.append(f"{('per_seq_ms', 'per_kv_token_us')[j - 1]} came out negative ({est[j]:.3g}); set to 0")
            est[j] = 0.0
    if est[3] <= 0:
        warnings.append("prefill cost came out <= 0 (prompts too short to time); prefill_tps kept at its default")
        est[3], held = defaults[3], [*held, 3]
        err.pop(3, None)
    host = base.host_overhead_ms
    step_base = max(est[0] * 1000.0 - host, 0.0)
    prov = [
        Param("step_base_ms", round(step_base, 4), "fitted", _ms(err.get(0)),
              f"host_overhead + step_base = {est[0] * 1000:.3f} ms per step (the intercept); split at the assumed host"),
        Param("host_overhead_ms", host, "assumed",
              note="latencies pin host + step_base only; the GPU busy fraction (GPU utilization) would split them"),
        _fitted_or_held("per_seq_ms", est[1] * 1000.0, _ms(err.get(1)), 1 in held,
                        "a ladder whose batch grows (several concurrency steps)"),
        _fitted_or_held("per_kv_token_us", est[2] * 1e6, None if err.get(2) is None else err[2] * 1e6, 2 in held,
                        "requests of different prompt lengths at several concurrencies"),
        _fitted_or_held("prefill_tps", 1.0 / est[3], None if err.get(3) is None else err[3] / est[3] ** 2,
                        3 in held, "prompts long enough to time"),
        cap_param,
        Param("max_batched_tokens", base.max_batched_tokens, "assumed",
              note="the prefill chunk; TTFT of prompts longer than it at one concurrency would pin it"),
        kv_param(m, c, base),
    ]  # fmt: skip
    prov.append(_prefix_param(m, base))
    values = {p.name: p.value for p in prov}
    # each field in its own type (bool, int or float)
    typed: dict[str, Any] = {k: (v if isinstance(v, bool) else int(v) if k in ("max_num_seqs", "max_batched_tokens",
                             "kv_blocks") else float(v)) for k, v in values.items()}  # fmt: skip
    params = replace(base, **typed)
    steps = {s.users for s in m.steps}
    if len(steps) < 2:
        warnings.append("one load level only: the batch-size terms rest on that level alone; extrapolation is weak")
    rel = float(np.sqrt(np.mean((resid) ** 2)))
    grid = np.sort(c.start) + 1e-6
    return Fit(
        params=params,
        provenance=tuple(prov),
        rows=len(y),
        rel_rms=rel,
        max_concurrency=int(in_flight_at(c, grid).max()) if len(grid) else 0,
        max_input=int(c.input.max()),
        max_output=int(c.output.max()),
        warnings=tuple(warnings),
    )


def _prefix_param(m: Measured, base: EngineParams) -> Param:
    """Whether the engine caches prompt prefixes: the server's cached prompt tokens say it (usage)."""
    said = [r for r in m.reqs if r.cached is not None]
    hits = [r for r in said if r.cached]
    if hits:
        return Param("prefix_caching", True, "measured", note=f"{len(hits)} of {len(said)} requests found prompt "
                     f"tokens cached ({sum(r.cached or 0 for r in hits)} in all; the server's usage)")  # fmt: skip
    repeats = [r for r in said if r.turn > 1 and r.input > 2 * base.block_size]  # each re-sent its history
    if len(repeats) >= 3:
        return Param("prefix_caching", False, "measured",
                     note=f"{len(repeats)} conversation turns re-sent their history and found none of it cached")  # fmt: skip
    return Param("prefix_caching", bool(base.prefix_caching), "assumed",
                 note="the server's cached prompt tokens (usage.prompt_tokens_details.cached_tokens) on prompts "
                 "that repeat (conversation turns, shared prefixes) would pin it")  # fmt: skip


def _ms(x: float | None) -> float | None:
    return None if x is None else x * 1000.0


def _fitted_or_held(name: str, value: float, stderr: float | None, held: bool, signal: str) -> Param:
    if held:
        return Param(name, round(value, 6), "assumed", note=f"the run had no spread to fit it; {signal} would pin it")
    return Param(name, round(value, 6), "fitted", stderr)
