"""What each measured request saw while it ran, from the other requests' timing alone.

For a request's decode (first to last token), sampled at a few points: how many sequences
were decoding (``n``), how many KV tokens they held (``ctx``: each one's prompt plus the
tokens it had produced by then), and the prompt tokens prefilled meanwhile (requests whose
first token fell inside it; those the prefix cache served were not), per decode step. For its
prefill (start, or admission, to first token): the same ``n`` and ``ctx`` at its start. These are the regressors of the step cost
(:mod:`llmload.capacity.fit`); ``running_peak`` counts the admitted sequences over time, the
admission cap's signal.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llmload.capacity.measured import Req

__all__ = ["Columns", "columns", "decode_features", "decoding_at", "in_flight_at", "prefill_features", "running_at"]

_POINTS = 8


class Columns:
    """The requests as numpy columns (seconds, tokens)."""

    def __init__(self, reqs: Sequence[Req]) -> None:
        self.start = np.array([r.start for r in reqs])
        self.first = np.array([r.first for r in reqs])
        self.last = np.array([r.last for r in reqs])
        self.end = np.array([r.end for r in reqs])
        self.input = np.array([r.input for r in reqs], dtype=float)
        self.output = np.array([r.output for r in reqs], dtype=float)
        self.prefill = np.array([r.prefill for r in reqs], dtype=float)  # prompt tokens computed (not cached)
        queue = np.array([r.queue_s if r.queue_s is not None else np.nan for r in reqs])
        self.has_queue = bool(len(reqs)) and not np.isnan(queue).any()
        self.admitted = self.start + np.nan_to_num(queue, nan=0.0)


def columns(reqs: Sequence[Req]) -> Columns:
    return Columns(reqs)


def _decoding(c: Columns, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sequences decoding, their KV tokens) at each time of ``t``."""
    tt = t[:, None]
    on = (c.first[None, :] <= tt) & (tt < c.last[None, :])
    span = np.maximum(c.last - c.first, 1e-9)
    done = np.clip((tt - c.first[None, :]) / span[None, :], 0.0, 1.0) * c.output[None, :]
    ctx = np.where(on, c.input[None, :] + done, 0.0)
    return on.sum(axis=1).astype(float), ctx.sum(axis=1)


def decode_features(c: Columns, i: int) -> tuple[float, float, float]:
    """(mean decoding sequences, mean KV tokens, prompt tokens prefilled per decode step) over request i's decode."""
    f, l_ = c.first[i], c.last[i]
    t = f + (l_ - f) * (np.arange(_POINTS) + 0.5) / _POINTS
    n, ctx = _decoding(c, t)
    n, ctx = np.maximum(n, 1.0), ctx  # i itself decodes throughout
    inside = (c.first > f) & (c.first <= l_)
    steps = max(c.output[i] - 1.0, 1.0)
    return float(n.mean()), float(ctx.mean()), float(c.prefill[inside].sum() / steps)


def prefill_features(c: Columns, i: int) -> tuple[float, float]:
    """(decoding sequences, their KV tokens) when request i was admitted."""
    n, ctx = _decoding(c, np.array([c.admitted[i]]))
    return float(n[0]), float(ctx[0])


def running_at(c: Columns, t: np.ndarray) -> np.ndarray:
    """Admitted, unfinished sequences at each time of ``t`` (the engine's running batch)."""
    tt = t[:, None]
    return ((c.admitted[None, :] <= tt) & (tt < c.last[None, :])).sum(axis=1)


def decoding_at(c: Columns, t: np.ndarray) -> np.ndarray:
    """Sequences between their first and last token at each time of ``t``."""
    return _decoding(c, t)[0]


def in_flight_at(c: Columns, t: np.ndarray) -> np.ndarray:
    """Requests sent and not yet answered at each time of ``t``."""
    tt = t[:, None]
    return ((c.start[None, :] <= tt) & (tt < c.end[None, :])).sum(axis=1)
