"""A measured run read back for fitting: its requests (from ``--records-jsonl``) and its ladder steps.

Times are seconds from the first request's start (wall clock of the records). A request is
``Req``: start, first token, last token, end, input and output tokens, its class, and the
server's own queue/prefill times when the engine sent them; then the prompt tokens the server
served from its prefix cache (``cached_prompt_tokens``; None when it did not say) and who sent it:
the user (the record's ``user``, absent from records written before it), the conversation
(``session``) and its turn, which link a user's requests (:mod:`llmload.capacity.chains`). Steps come from the summary's
ladder windows (``started_at``, ``steady_from``, ``ended_at``, wall clock) on the same axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from llmload.errors import ConfigError

__all__ = ["Measured", "Req", "Step", "load_measured"]


@dataclass(frozen=True, slots=True)
class Req:
    start: float
    first: float
    last: float
    end: float
    input: int
    output: int
    cls: str
    queue_s: float | None
    prefill_s: float | None
    complete: bool = True  # False: cut by the end of the run (it still loaded the engine while it ran)
    cached: int | None = None  # prompt tokens served from the server's prefix cache (None: it did not say)
    user: str = ""  # the user that sent it ("": unknown, a record written before the field)
    session: str = ""  # its conversation ("": a single request)
    turn: int = 0  # its turn in that conversation (1, 2, ...; 0: a single request)

    @property
    def ttft(self) -> float:
        return self.first - self.start

    @property
    def prefill(self) -> int:
        """Prompt tokens the engine computed (the cached ones were not): at least one."""
        return max(self.input - (self.cached or 0), 1) if self.input > 0 else 0

    @property
    def tpot(self) -> float:
        return (self.last - self.first) / (self.output - 1) if self.output > 1 else 0.0


@dataclass(frozen=True, slots=True)
class Step:
    index: int
    users: int
    rate: float | None
    start: float
    steady: float
    end: float


@dataclass(frozen=True, slots=True)
class Measured:
    reqs: tuple[Req, ...]
    steps: tuple[Step, ...]
    summary: dict[str, Any]
    t0_wall: float
    source: str
    closed_loop: bool = True
    gauges: dict[str, list[Any]] = field(default_factory=dict)  # engine series (running, waiting, ...); None: no sample

    def step_of(self, r: Req) -> Step | None:
        for s in self.steps:
            if s.steady <= r.start < s.end:
                return s
        return None


def _req(d: dict[str, Any], t0: float) -> Req | None:
    chunks = d.get("chunks_ns") or []
    if d.get("outcome") not in ("ok", "interrupted") or not chunks or not d.get("output_tokens"):
        return None
    first_i = max(d.get("first_output_chunk", 0) or 0, 0)
    if first_i >= len(chunks):
        return None
    s = d["start_wall_ns"] / 1e9 - t0
    q, p = d.get("server_queue_ms"), d.get("server_prefill_ms")
    user = d.get("user")
    return Req(
        start=s,
        first=s + chunks[first_i] / 1e9,
        last=s + chunks[-1] / 1e9,
        end=s + d["end_ns"] / 1e9,
        input=int(d.get("input_tokens") or 0),
        output=int(d["output_tokens"]),
        cls=d.get("class", ""),
        queue_s=None if q is None else q / 1000.0,
        prefill_s=None if p is None else p / 1000.0,
        complete=d.get("outcome") == "ok" and not d.get("warmup"),  # a warm-up request loaded the engine, cold
        cached=d.get("cached_prompt_tokens"),
        user="" if user is None or user < 0 else str(user),
        session=d.get("session") or "",
        turn=int(d.get("turn") or 0),
    )


def read_records(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_bytes().splitlines()
    except OSError as e:
        raise ConfigError(
            f"--records-jsonl {path}: cannot read it ({e.strerror or e}); pass the file the run wrote"
        ) from e
    out = []
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                out.append(orjson.loads(line))
            except orjson.JSONDecodeError as e:
                raise ConfigError(
                    f"--records-jsonl {path}:{n}: not JSON ({e}); pass a file written by --records-jsonl"
                ) from e
    return out


def find_records(run: Path, records: str) -> list[Path]:
    """The records files: ``records`` when given (or, from --processes, its ``<stem>.worker<N><suffix>`` files),
    else ``records*.jsonl`` in the run directory."""
    if records:
        p = Path(records)
        workers = sorted(p.parent.glob(f"{p.stem}.worker*{p.suffix}"))
        return [p] if p.exists() or not workers else workers
    folder = run if run.is_dir() else run.parent
    found = sorted(folder.glob("records*.jsonl"))
    if found:
        return found
    raise ConfigError(
        f"{run}: no per-request records found beside it; pass --records-jsonl FILE "
        "(the run's --records-jsonl; fitting needs each request's timing)"
    )


def load_summary(run: Path) -> dict[str, Any]:
    path = run / "summary.json" if run.is_dir() else run
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as e:
        raise ConfigError(
            f"{path}: cannot read the run's summary ({e}); pass a run directory or its summary.json"
        ) from e


def load_measured(run: Path, records: str = "") -> Measured:
    summary = load_summary(run)
    paths = find_records(run, records)
    path = paths[0]
    raw = [d for p in paths for d in read_records(p) if d.get("start_wall_ns")]
    if not raw:
        raise ConfigError(f"--records-jsonl {path}: no request records in it; run with --records-jsonl to fit")
    t0 = min(d["start_wall_ns"] for d in raw) / 1e9
    reqs = tuple(sorted((r for d in raw if (r := _req(d, t0)) is not None), key=lambda r: r.start))
    if sum(r.complete for r in reqs) < 8:
        raise ConfigError(f"--records-jsonl {path}: {len(reqs)} completed requests; fitting needs at least 8")
    steps = []
    for st in summary.get("steps") or ():
        if st.get("started_at") is None or st.get("ended_at") is None:
            continue
        steady = st.get("steady_from") or st["started_at"]
        steps.append(Step(st["index"], int(st.get("users") or 0), st.get("rate_offered"),
                          st["started_at"] - t0, steady - t0, st["ended_at"] - t0))  # fmt: skip
    if not steps:  # a plain run: one step over everything
        users = int(summary.get("users_max") or 0)
        steps.append(Step(0, users, None, 0.0, 0.0, max(r.end for r in reqs) + 1.0))
    closed = ((summary.get("arrival") or {}).get("mode") or "closed") == "closed"
    return Measured(reqs, tuple(steps), summary, t0, ", ".join(map(str, paths)), closed, _gauges(run))


def _gauges(run: Path) -> dict[str, list[float]]:
    """The engine series of the run directory's timeseries.json ({} when none)."""
    folder = run if run.is_dir() else run.parent
    path = folder / "timeseries.json" if run.is_dir() else run.with_name(f"{run.stem}.timeseries.json")
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    signals = (doc.get("server") or {}).get("signals") or {}
    out = {k: list(v) for k, v in signals.items() if isinstance(v, list)}
    if isinstance(doc.get("t"), list):
        out["_t_wall"] = list(doc["t"])  # each scrape's wall-clock time, aligned with the series
    return out
