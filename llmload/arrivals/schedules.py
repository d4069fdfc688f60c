"""Arrival processes: when each request of an open-loop run is meant to be sent.

Closed-loop load (N users, each sending when its last request ended) lets the server pace
the client: when it slows down, fewer requests are sent, and the queue that real users
would have built in front of it never exists (coordinated omission). Open-loop load sends
on a schedule that does not wait for answers. This module makes that schedule; the
dispatcher (:mod:`llmload.arrivals.dispatcher`) sends on it.

**One global sequence, shared by stride.** Every load process draws the *same* sequence
of unit-rate arrival times ``u_0 < u_1 < ...`` from the run seed (a unit-rate process:
mean gap 1), and process ``w`` of ``n`` takes the arrivals ``i ≡ w (mod n)``. The merged
arrivals of all processes are therefore exactly the requested process — a Poisson process
split by stride is not Poisson per process, but nobody measures one worker's share — and
the class of arrival ``i`` comes from one :class:`~llmload.workload.mix.Mix` over the
global sequence, so the mix's exact ratio holds for the merged arrivals too.

**Rates by time rescaling.** The rate is piecewise constant (a rate ladder changes it per
step): ``R(t) = R_k`` from ``T_k``. The integrated rate ``Λ(t) = Σ R_k·Δt`` maps unit
arrival ``u_i`` to the time ``t_i = Λ⁻¹(u_i)`` — the standard time-change theorem, which
keeps each process's law (a unit-rate Poisson process rescaled by ``Λ`` is a Poisson
process of intensity ``R(t)``). A rate change needs no restart, no new draw, and every
process that knows the same steps computes the same times.

Gaps of a unit-rate process (mean 1):

========== ======================================== ===========================
mode        gap                                      inter-arrival CV
========== ======================================== ===========================
constant    exactly 1                                0
poisson     Exp(1)                                   1
gamma       Gamma(shape K, scale 1/K)                1/√K (K = 0.25 → 2)
========== ======================================== ===========================

``gamma`` with ``K = 1`` is Poisson; ``K < 1`` is burstier (many short gaps, a few long
ones), ``K > 1`` more regular. Draws use numpy's PCG64 seeded from the run seed, in blocks.

**Bounds.** A run offers at most :data:`MAX_RATE` requests/s (all processes together), and
one process schedules at most :data:`MAX_PROCESS_RATE` of them well (above, the dispatcher
falls behind: :func:`process_rate_warning`); gamma's shape is at least :data:`MIN_BURSTINESS`
(below, nearly every gap is 0 and arrivals come in bursts of millions).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ARRIVAL_MODES",
    "MAX_PROCESS_RATE",
    "MAX_RATE",
    "MIN_BURSTINESS",
    "TRACE_MODE",
    "ArrivalSpec",
    "RatePlan",
    "process_rate_warning",
    "unit_arrivals",
    "worker_share",
]

#: ``closed`` is today's closed loop (no schedule); the others are open-loop processes.
ARRIVAL_MODES = ("closed", "constant", "poisson", "gamma")
#: The mode of a trace replay (``--trace``): open loop at the times a file gives, not a drawn process.
TRACE_MODE = "trace"
_BLOCK = 1024
#: The most requests/s a run can offer (``--rate``, each ``--rate-ladder`` step; all processes together).
#: One dispatcher releases ~450,000 arrivals/s with nothing else to do, and a load process sends a
#: few thousand requests/s at most: a rate above this is a typo (``1e9``), refused before any load.
MAX_RATE = 100_000.0
#: The most requests/s one load process is expected to keep on schedule; a larger share is said
#: in one warning at its start (the run goes on: the dispatcher stays bounded and the summary
#: shows the shortfall: unsent arrivals, schedule lag).
MAX_PROCESS_RATE = 10_000.0
#: gamma's smallest shape (inter-arrival CV 1/sqrt(K) = 10). Below it nearly every gap underflows to 0.
MIN_BURSTINESS = 0.01
# Separates the arrival stream from every other use of the run seed (prompts use user RNGs).
_STREAM = 0x41_52_52_49_56_41_4C  # "ARRIVAL"


@dataclass(frozen=True)
class ArrivalSpec:
    """The arrival process of a run: ``mode`` (one of :data:`ARRIVAL_MODES`) and gamma's shape."""

    mode: str = "closed"
    burstiness: float = 1.0

    def __post_init__(self) -> None:
        if self.mode not in ARRIVAL_MODES and self.mode != TRACE_MODE:
            raise ValueError(f"arrival mode must be one of {', '.join(ARRIVAL_MODES)}, got {self.mode!r}")
        if not (math.isfinite(self.burstiness) and self.burstiness >= MIN_BURSTINESS):
            raise ValueError(f"burstiness must be a number >= {MIN_BURSTINESS:g} (gamma shape; 1 = Poisson), "
                             f"got {self.burstiness!r}")  # fmt: skip

    @property
    def open_loop(self) -> bool:
        return self.mode != "closed"


def unit_arrivals(spec: ArrivalSpec, seed: int) -> Iterator[float]:
    """The global unit-rate arrival times ``u_0, u_1, ...`` (mean gap 1), the same in every process.

    The first arrival is at ``u_0 = 0`` for ``constant`` (a run starts with a request) and
    after one random gap otherwise (as a renewal process started at time 0).
    """
    if not spec.open_loop:
        raise ValueError("a closed loop has no arrival schedule")
    if spec.mode == TRACE_MODE:
        raise ValueError("a trace's arrival times come from its file, not from a seed")
    if spec.mode == "constant":
        i = 0
        while True:  # i · 1 exactly: no accumulated rounding over millions of arrivals
            yield float(i)
            i += 1
    rng = np.random.Generator(np.random.PCG64([_STREAM, seed & 0xFFFFFFFFFFFFFFFF]))
    k = spec.burstiness
    u = 0.0
    while True:
        gaps = rng.exponential(1.0, _BLOCK) if spec.mode == "poisson" else rng.gamma(k, 1.0 / k, _BLOCK)
        times = u + np.cumsum(gaps)
        u = float(times[-1])
        yield from times.tolist()


def process_rate_warning(rate: float, workers: int) -> str | None:
    """One line when this process's share of ``rate`` (requests/s, the run's) is above :data:`MAX_PROCESS_RATE`."""
    share = rate / max(workers, 1)
    if share <= MAX_PROCESS_RATE:
        return None
    return (f"this load process's share of the arrivals is {share:,.0f} req/s, more than one process keeps on "
            f"schedule ({MAX_PROCESS_RATE:,.0f} req/s): the client will fall behind (see the summary's unsent "
            "arrivals and schedule lag); add processes (--processes N)")


def worker_share(arrivals: Iterator[float], worker: int, workers: int) -> Iterator[tuple[int, float]]:
    """``(global index, unit time)`` of the arrivals that process ``worker`` of ``workers`` sends."""
    if workers < 1 or not 0 <= worker < workers:
        raise ValueError(f"worker index {worker} out of range for {workers} workers")
    for i, u in enumerate(arrivals):
        if i % workers == worker:
            yield i, u


class RatePlan:
    """A piecewise-constant rate ``R(t)`` (requests/s for the whole run) and its time change.

    ``t`` is seconds since the schedule's start. :meth:`set_rate` starts a new constant
    piece at ``at_s`` (not before the last one); :meth:`time_of` maps a unit-rate arrival
    time to wall seconds, ``None`` while the rate is 0 and stays 0 (paused: the arrival
    waits for a later rate change).
    """

    __slots__ = ("_lambda", "_rates", "_starts")

    def __init__(self, rate: float, at_s: float = 0.0) -> None:
        _check_rate(rate)
        self._starts = [at_s]
        self._rates = [float(rate)]
        self._lambda = [0.0]  # Λ at each piece's start

    @property
    def rate(self) -> float:
        """The rate of the last piece."""
        return self._rates[-1]

    @property
    def pieces(self) -> list[tuple[float, float]]:
        """``(start_s, rate)`` of every piece."""
        return list(zip(self._starts, self._rates, strict=True))

    def set_rate(self, rate: float, at_s: float) -> None:
        _check_rate(rate)
        last = self._starts[-1]
        if at_s < last:
            raise ValueError(f"a rate change at {at_s:g} s comes before the previous one at {last:g} s")
        if at_s == last:  # replaces the piece that has not run yet
            self._rates[-1] = float(rate)
            return
        self._lambda.append(self._lambda[-1] + self._rates[-1] * (at_s - last))
        self._starts.append(at_s)
        self._rates.append(float(rate))

    def integrated(self, t: float) -> float:
        """``Λ(t)``: expected arrivals from the start to ``t``."""
        k = max(bisect.bisect_right(self._starts, t) - 1, 0)
        return self._lambda[k] + self._rates[k] * max(t - self._starts[k], 0.0)

    def time_of(self, u: float) -> float | None:
        """``Λ⁻¹(u)``: when unit arrival ``u`` happens, or ``None`` if the rate is 0 from then on."""
        # The last piece whose start Λ is <= u (a zero-rate piece has the same Λ at both
        # ends, so the piece after it is the one found).
        k = max(bisect.bisect_right(self._lambda, u) - 1, 0)
        rate = self._rates[k]
        if rate == 0.0:
            return None
        return self._starts[k] + (u - self._lambda[k]) / rate


def _check_rate(rate: float) -> None:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate < 0:
        raise ValueError(f"a request rate must be a number >= 0 (requests/s), got {rate!r}")
