"""What a diagnosis rule reads (:class:`Context`), returns (:class:`~llmload.results.judgement.Finding`), and how rules declare their inputs.

A rule is a plain function ``Context -> list[Finding]`` decorated with :func:`rule`,
which records its id, layer and the signal sources it needs:

* ``needs`` — sources without which the rule cannot say anything (it is skipped, and the
  diagnosis reports ``not_enough_signals`` instead of guessing from client numbers);
* ``wants`` — sources that only raise its confidence (it runs without them, at a lower
  confidence, and ``not_enough_signals`` says which checks were left out).

Sources: ``"server"`` (the engine's /metrics, per step), ``"gpu"`` (a GPU exporter, per
step). Client-only rules need nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.analysis.cache import CacheView, cache_view
from llmload.analysis.steps import StepView
from llmload.results.judgement import Breach, Finding, Verdict
from llmload.results.model import RunResult, Stats
from llmload.results.setup import DEFAULT_DEGRADATION, LoadState

__all__ = ["CONFIDENCES", "Context", "Finding", "Rule", "build_context", "rule"]

CONFIDENCES = ("high", "medium", "low")
#: Signals whose presence in a step means the engine's /metrics were read.
_SERVER_CORE = ("waiting", "running", "kv_cache_usage")
_GPU_CORE = ("utilization", "memory_bandwidth_utilization", "sm_activity")


@dataclass(frozen=True, slots=True)
class Context:
    """Everything the rules read: the steps, the baseline, the verdict's breach, the client's state."""

    steps: tuple[StepView, ...]
    baseline: StepView | None = None
    degradation: float = DEFAULT_DEGRADATION
    breach: Breach | None = None
    client: LoadState = field(default_factory=LoadState)  # the load generator's state
    coarse_bandwidth: bool = False
    run: Stats | None = None  # the whole run's figures (error kinds and examples)
    host: str | None = None  # the target, as the run recorded it
    cache: CacheView = field(default_factory=CacheView)  # the workload's shared prefixes and the hit ratios

    @property
    def has_server(self) -> bool:
        return any(name in s.server for s in self.steps for name in _SERVER_CORE)

    @property
    def has_gpu(self) -> bool:
        return any(name in s.gpu for s in self.steps for name in _GPU_CORE)

    @property
    def sources(self) -> frozenset[str]:
        return frozenset(n for n, ok in (("server", self.has_server), ("gpu", self.has_gpu)) if ok)

    @property
    def binding(self) -> str | None:
        """The family of the metric that breached first: ``"ttft"``, ``"tpot"``, ``"errors"`` or None."""
        metric = self.breach.metric if self.breach is not None else None
        if not metric:
            return None
        return "errors" if metric == "error_rate" else metric.split("_")[0]

    def loaded(self) -> list[StepView]:
        """Steps under load: the ladder steps after the baseline (or the whole run without a ladder)."""
        if self.baseline is None:
            return [s for s in self.steps if s.index is None]
        b = self.baseline.index if self.baseline.index is not None else -1
        return [s for s in self.steps if s.index is not None and s.index >= 0 and s.index > b]

    def ratio(self, step: StepView, metric: str) -> float | None:
        """``step``'s metric (``"ttft_p50"``, ``"itl_p99"``, ...) divided by the baseline's."""
        if self.baseline is None:
            return None
        v, b = step.perf.value(metric), self.baseline.perf.value(metric)
        return v / b if v is not None and b else None

    def after(self, step: StepView) -> list[StepView]:
        """The ladder steps from ``step`` on (``step`` included)."""
        return [s for s in self.steps if s.index is not None and step.index is not None and s.index >= step.index]


Rule = Callable[[Context], list[Finding]]


def rule(
    id: str, layer: str, needs: tuple[str, ...] = (), wants: tuple[str, ...] = ()
) -> Callable[[Callable[..., list[Finding]]], Rule]:
    """Declare a rule function: its finding id, its layer, the sources it needs and wants."""

    def wrap(fn: Callable[..., list[Finding]]) -> Rule:
        fn.rule_id = id  # type: ignore[attr-defined]
        fn.layer = layer  # type: ignore[attr-defined]
        fn.needs = frozenset(needs)  # type: ignore[attr-defined]
        fn.wants = frozenset(wants)  # type: ignore[attr-defined]
        return fn

    return wrap


def build_context(
    steps: list[StepView],
    baseline: StepView | None,
    verdict: Verdict | None,
    result: RunResult,
    degradation: float,
) -> Context:
    """The rules' view of a run (the client's state, whether the GPU bandwidth figure is coarse)."""
    devices: Any = (result.gpu or {}).get("devices") or ()
    coarse = any(isinstance(d, Mapping) and "memory_bandwidth_utilization" in (d.get("coarse") or ()) for d in devices)
    return Context(
        steps=tuple(steps),
        baseline=baseline,
        degradation=degradation,
        breach=verdict.breach if verdict is not None else None,
        client=result.load,
        coarse_bandwidth=coarse,
        run=result.overall,
        host=result.setup.host,
        cache=cache_view(result),
    )
