"""Statistics of inter-arrival gaps shared by the arrival tests (unit: the drawn process; integration: real sends)."""

from __future__ import annotations

import numpy as np


def cv(gaps: np.ndarray) -> float:
    """Coefficient of variation: std / mean (0 constant, 1 Poisson, 1/sqrt(K) gamma of shape K)."""
    return float(gaps.std() / gaps.mean())


def ks_exponential(gaps: np.ndarray) -> float:
    """Kolmogorov-Smirnov distance between the gaps (normalised to mean 1) and Exp(1); 1.63/sqrt(n) is the 1 % level."""
    x = np.sort(gaps / gaps.mean())
    n = len(x)
    cdf = 1.0 - np.exp(-x)
    return float(max((np.arange(1, n + 1) / n - cdf).max(), (cdf - np.arange(n) / n).max()))
