"""The sampler: reads every GPU on its own timer and keeps the last :class:`Snapshot`.

Scrapes never call NVML: the collector reads :attr:`Sampler.snapshot`, which one
background thread replaces every ``interval_s`` (fixed rate; a late tick is not made up).
All NVML calls of a running sidecar happen in that thread.

GPM needs two samples apart in time: per GPU (or MIG instance) the sampler keeps the
previous sample and asks the backend for the ratios between it and the new one. The
window is guarded as the research notes advise: under :data:`MIN_GPM_WINDOW_S` the new
sample is dropped and the last ratios kept; after a gap longer than
``max(MAX_GPM_GAP_S, 5 × interval)`` the pair is re-primed (no GPM values that tick).

Failures, each logged once: a signal that turns :class:`Unsupported` mid-run is left
out from then on; :class:`GpuLost` marks the GPU down (``llmload_gpu_up 0``, its series
dropped, no more calls to it) while the other GPUs go on; :class:`NvmlCallError`
skips that value for this tick.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from llmload.gpu import names
from llmload.gpu.backend import GpmMetrics, GpuBackend, GpuLost, NvmlCallError, Unsupported
from llmload.gpu.probe import GpuPlan, Inventory

__all__ = ["MAX_GPM_GAP_S", "MIN_GPM_WINDOW_S", "Row", "Sampler", "Snapshot"]

log = logging.getLogger("llmload.gpu")

MIN_GPM_WINDOW_S = 0.1
MAX_GPM_GAP_S = 10.0


@dataclass(frozen=True, slots=True)
class Row:
    """The values (base units) of one GPU or MIG instance, or one process (``{"used": bytes}``)."""

    labels: dict[str, str]
    values: dict[str, float]
    bandwidth_source: str | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a scrape exports: the last sample of every GPU."""

    rows: tuple[Row, ...] = ()
    processes: tuple[Row, ...] = ()
    lost: frozenset[int] = frozenset()  # NVML indexes of GPUs marked down
    supported: dict[int, frozenset[str]] = field(default_factory=dict)
    samples: int = 0
    wall_time: float | None = None  # time.time() at the start of the last sample
    duration_s: float = 0.0


@dataclass
class _GpuState:
    plan: GpuPlan
    supported: set[str]
    lost: bool
    failing: set[str] = field(default_factory=set)  # signals whose NvmlCallError was logged


class Sampler:
    """Samples ``inventory``'s GPUs from ``backend``; :meth:`start` runs it every ``interval_s``."""

    def __init__(
        self,
        backend: GpuBackend,
        inventory: Inventory,
        interval_s: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.inventory = inventory
        self.interval_s = interval_s
        self._clock, self._wall = clock, wall
        self._gpus = [_GpuState(p, set(p.supported), p.lost) for p in inventory.gpus]
        self._gpm_prev: dict[tuple[int, int | None], tuple[Any, float]] = {}
        self._gpm_last: dict[tuple[int, int | None], GpmMetrics] = {}
        self._samples = 0
        self._snapshot = self._build([], [], 0.0, None)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    # -- timer --------------------------------------------------------------------------------

    def start(self) -> None:
        """Sample every ``interval_s`` in a daemon thread, the first one ``interval_s`` from now."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="llmload-gpu-sampler", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        self.run_timer(self._stop.wait)

    def run_timer(self, wait: Callable[[float], bool]) -> None:
        """The timer: sample every ``interval_s`` on an absolute schedule until ``wait(seconds)`` says stop.

        ``wait`` is the stop event's ``wait`` on the sampler's thread (tests pass one that
        moves their clock instead).
        """
        deadline = self._clock()
        while True:
            deadline += self.interval_s
            now = self._clock()
            if deadline < now:  # late (a slow NVML call): skip the missed ticks
                deadline = now
            if wait(deadline - now):
                return
            try:
                self.sample_once()
            except Exception:  # a bug, not a GPU fault: keep the last snapshot and go on
                log.exception("GPU sample failed")

    # -- one sample ---------------------------------------------------------------------------

    def sample_once(self) -> Snapshot:
        """Read every GPU now and publish the new snapshot (also returned)."""
        wall, t0 = self._wall(), self._clock()
        rows: list[Row] = []
        procs: list[Row] = []
        for st in self._gpus:
            if st.lost:
                continue
            gpu_rows: list[Row] = []
            gpu_procs: list[Row] = []
            try:
                self._sample_gpu(st, gpu_rows, gpu_procs)
            except GpuLost as e:
                self._mark_lost(st, e)
                continue
            rows.extend(gpu_rows)
            procs.extend(gpu_procs)
        self._samples += 1
        self._snapshot = self._build(rows, procs, self._clock() - t0, wall)
        return self._snapshot

    def _build(self, rows: list[Row], procs: list[Row], duration: float, wall: float | None) -> Snapshot:
        return Snapshot(
            rows=tuple(rows),
            processes=tuple(procs),
            lost=frozenset(st.plan.index for st in self._gpus if st.lost),
            supported={st.plan.index: frozenset(st.supported) for st in self._gpus},
            samples=self._samples,
            wall_time=wall,
            duration_s=duration,
        )

    def _sample_gpu(self, st: _GpuState, rows: list[Row], procs: list[Row]) -> None:
        """One GPU's row, then a row per MIG instance, then its processes' rows."""
        rows.append(Row(st.plan.labels, self._gpu_values(st), st.plan.bandwidth_source))
        rows.extend(self._mig_rows(st))
        procs.extend(self._process_rows(st))

    def _gpu_values(self, st: _GpuState) -> dict[str, float]:
        """The whole GPU's values (memory only without MIG: with it, each instance has its own)."""
        b, i, plan = self.backend, st.plan.index, st.plan
        values: dict[str, float] = {}
        u = self._read(st, "utilization", b.utilization, i)
        if u is not None:
            values["utilization"] = u.gpu
            values["memory_busy"] = u.memory_busy
        if not plan.mig:
            m = self._read(st, "memory", b.memory, i)
            if m is not None:
                values.update(memory_used=float(m.used), memory_free=float(m.free), memory_total=float(m.total))
        for signal, key, fn in (
            ("power", "power", b.power_w),
            ("power_limit", "power_limit", b.power_limit_w),
            ("temperature", "temperature", b.temperature_c),
            ("sm_clock", "sm_clock", b.sm_clock_hz),
        ):
            v = self._read(st, signal, fn, i)
            if v is not None:
                values[key] = float(v)
        if plan.pcie_source == "nvml":
            pcie = self._read(st, "pcie", b.pcie, i)
            if pcie is not None:
                values["pcie_rx"], values["pcie_tx"] = pcie
        if plan.gpm_whole_gpu:
            g = self._gpm(st, None)
            if g is not None:
                _put_gpm(values, g, pcie=plan.pcie_source == "gpm")
        return values

    def _mig_rows(self, st: _GpuState) -> list[Row]:
        """A row per MIG instance: its memory and its GPM ratios."""
        rows: list[Row] = []
        for mig in st.plan.mig:
            gi = mig.instance.gi_id
            mvalues: dict[str, float] = {}
            m = self._read(st, "memory", self.backend.memory, st.plan.index, gi)
            if m is not None:
                mvalues.update(memory_used=float(m.used), memory_free=float(m.free), memory_total=float(m.total))
            g = self._gpm(st, gi)
            if g is not None:
                _put_gpm(mvalues, g, pcie=False)
            rows.append(Row(mig.labels, mvalues, names.SOURCE_GPM))
        return rows

    def _process_rows(self, st: _GpuState) -> list[Row]:
        """A row per process using the GPU (with its MIG instance's labels when it runs in one)."""
        plan = st.plan
        rows: list[Row] = []
        for p in self._read(st, "processes", self.backend.processes, plan.index) or ():
            if p.used_bytes is None:
                continue
            labels = {**plan.labels, "pid": str(p.pid)}
            mig = next((m for m in plan.mig if m.instance.gi_id == p.gi_id), None)
            if mig is not None:
                labels.update(GPU_I_PROFILE=mig.instance.profile, GPU_I_ID=str(mig.instance.gi_id))
            rows.append(Row(labels, {"used": float(p.used_bytes)}))
        return rows

    def _gpm(self, st: _GpuState, gi_id: int | None) -> GpmMetrics | None:
        """GPM ratios between the previous sample of this GPU / instance and a new one (None while priming)."""
        i = st.plan.index
        key = (i, gi_id)
        now = self._clock()
        sample = self._read(st, "gpm", self.backend.gpm_sample, i, gi_id)
        if sample is None:
            return None
        prev = self._gpm_prev.get(key)
        if prev is None:
            self._gpm_prev[key] = (sample, now)
            return None
        earlier, t_earlier = prev
        window = now - t_earlier
        if window < MIN_GPM_WINDOW_S:
            self.backend.gpm_release(sample)
            return self._gpm_last.get(key)
        self._gpm_prev[key] = (sample, now)
        try:
            if window > max(MAX_GPM_GAP_S, 5 * self.interval_s):  # stale pair: start again from this one
                self._gpm_last.pop(key, None)
                return None
            metrics = self._read(st, "gpm", self.backend.gpm_metrics, earlier, sample)
        finally:
            self.backend.gpm_release(earlier)
        if metrics is not None:
            self._gpm_last[key] = metrics
        return metrics

    def _read(self, st: _GpuState, signal: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``, or None when the signal is (now) unsupported or the call failed; GpuLost propagates."""
        if signal not in st.supported:
            return None
        try:
            value = fn(*args)
        except Unsupported as e:
            st.supported.discard(signal)
            log.warning("gpu %d: %s is no longer supported (%s); left out from now on", st.plan.index, signal, e)
            return None
        except NvmlCallError as e:
            if signal not in st.failing:
                st.failing.add(signal)
                log.warning("gpu %d: reading %s failed (%s); skipped while it fails", st.plan.index, signal, e)
            return None
        if signal in st.failing:
            st.failing.discard(signal)
            log.info("gpu %d: %s reads again", st.plan.index, signal)
        return value

    def _mark_lost(self, st: _GpuState, e: Exception) -> None:
        st.lost = True
        i = st.plan.index
        for key in [k for k in self._gpm_prev if k[0] == i]:
            sample, _ = self._gpm_prev.pop(key)
            self._gpm_last.pop(key, None)
            try:
                self.backend.gpm_release(sample)
            except Exception:  # the GPU is gone; the sample is freed at close
                pass
        log.error(
            "gpu %d (%s): lost (%s); exported as llmload_gpu_up 0 without its other series, no longer read. "
            "The other GPUs are still sampled; restart the sidecar once the GPU is back (nvidia-smi)",
            i,
            st.plan.labels.get("UUID", "?"),
            e,
        )


def _put_gpm(values: dict[str, float], g: GpmMetrics, *, pcie: bool) -> None:
    if g.sm_activity is not None:
        values["sm_activity"] = g.sm_activity
    if g.dram_bandwidth is not None:
        values["dram_bandwidth"] = g.dram_bandwidth
    if pcie and g.pcie_rx is not None:
        values["pcie_rx"] = g.pcie_rx
    if pcie and g.pcie_tx is not None:
        values["pcie_tx"] = g.pcie_tx
