"""The run directory: every run's results in one place, ``runs/<UTC timestamp>-<profile>/``.

The process that summarises (standalone or ``--master``) writes it when the summary is
written (``--runs-dir DIR``, default ``runs``; ``--no-run-dir`` turns it off)::

    runs/20261130T104512Z-default/
      summary.json      the whole summary (schema llmload.summary/2): the contract, everything below is in it
      config.json       the public run configuration, the workload profile, the target host (no secrets)
      verdict.json      {"baseline", "verdict"}: the safe-concurrency judgement
      findings.json     the diagnosis findings, most likely bottleneck first ([] when none)
      timeseries.json   engine / GPU series (schema llmload.timeseries/1), only when metrics were collected

``llmload report RUN_DIR`` adds ``report.html``, ``report.md`` and ``report.json``.
:func:`load_run` reads a run back from its directory or from a summary JSON file, into the
typed results (:func:`llmload.results.from_summary`).

Secrets never reach these files: the summary's config is already public, and every
mapping written here is scrubbed of keys that name a credential (:data:`SECRET_KEYS`).
"""

from __future__ import annotations

import calendar
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import orjson

from llmload.config import public_url
from llmload.errors import LlmloadError
from llmload.jsonvalue import Json
from llmload.results import RunResult, SummaryError, from_summary, to_summary

__all__ = [
    "SECRET_KEYS",
    "Run",
    "RunDirError",
    "create_run_dir",
    "load_run",
    "run_dir_name",
    "save_run",
    "scrub",
    "write_run_dir",
]

log = logging.getLogger("llmload")

#: Keys dropped from anything written to a run directory, whatever their depth.
SECRET_KEYS = frozenset({"api_key", "apikey", "authorization", "password", "secret", "token", "bearer"})
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


class RunDirError(LlmloadError):
    """A run directory (or summary file) that cannot be read."""


@dataclass(frozen=True, slots=True)
class Run:
    """A run read back: its directory, its name, its results, and (when present) series and config.json."""

    path: Path  # the run directory (or the directory holding the summary file)
    name: str  # the directory's name, or the summary file's stem
    result: RunResult
    timeseries: dict[str, Json] | None = None
    config: dict[str, Json] | None = None

    @classmethod
    def from_summary(
        cls,
        path: Path,
        name: str,
        summary: dict[str, Json],
        timeseries: dict[str, Json] | None = None,
        config: dict[str, Json] | None = None,
    ) -> Run:
        """A run from a summary dict (:class:`~llmload.results.SummaryError` when it cannot be read)."""
        return cls(path, name, from_summary(summary), timeseries, config)


def scrub(value: Any) -> Any:
    """``value`` without mapping keys in :data:`SECRET_KEYS` (at any depth)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if str(k).lower() not in SECRET_KEYS}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return value


def run_dir_name(started_at: float, profile: str | None = None) -> str:
    """``20261130T104512Z`` or ``20261130T104512Z-<profile>`` (a profile path gives its stem)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started_at))
    if not profile:
        return stamp
    stem = Path(profile).name
    stem = stem[: -len(".toml")] if stem.endswith(".toml") else stem
    slug = _SLUG.sub("-", stem).strip("-.")[:40]
    return f"{stamp}-{slug}" if slug else stamp


def create_run_dir(root: str | os.PathLike[str], started_at: float, profile: str | None = None) -> Path:
    """Create and return a new directory under ``root``; ``-2``, ``-3``, ... when the name is taken."""
    base = Path(root) / run_dir_name(started_at, profile)
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"{base}: too many runs with this name")


def _dump(path: Path, value: Any, indent: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0))
    os.replace(tmp, path)


def _started(text: str | None) -> float:
    if isinstance(text, str):
        try:
            return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))
        except ValueError:
            pass
    return time.time()


def write_run_dir(
    root: str | os.PathLike[str],
    result: RunResult,
    *,
    timeseries: dict[str, Json] | None = None,
    host: str | None = None,
    path: Path | None = None,
    summary: dict[str, Json] | None = None,
) -> Path:
    """Write a new run directory of ``result`` under ``root`` (layout in the module docstring), or into the
    existing directory ``path`` (``--repeat``: beside the repetitions' summaries); ``summary``: ``result``'s
    :func:`to_summary`, when the caller has made it already; raises OSError."""
    path = path or create_run_dir(root, _started(result.started_at), _workload(result))
    summary = scrub(summary if summary is not None else to_summary(result))  # a copy: the caller's stays as it is
    if timeseries is not None:
        given = summary.get("timeseries")
        block: dict[str, Json] = {**(given if isinstance(given, Mapping) else {}), "path": "timeseries.json"}
        summary["timeseries"] = block
        if "schema" in timeseries:
            block["schema"] = timeseries["schema"]
        _dump(path / "timeseries.json", scrub(timeseries), indent=False)
    else:
        summary.pop("timeseries", None)  # a path relative to --summary-json means nothing here
    _dump(path / "summary.json", summary)
    _dump(
        path / "config.json",
        {
            "schema": "llmload.config/1",
            "started_at": summary.get("started_at"),
            "host": _public_host(host),
            "config": summary.get("config"),
            "profile": summary.get("profile"),
        },
    )
    _dump(path / "verdict.json", {"baseline": summary.get("baseline"), "verdict": summary.get("verdict")})
    _dump(path / "findings.json", summary.get("findings") or [])
    return path


def _workload(result: RunResult) -> str | None:
    """What the directory is named after: ``--profile``, or a trace replay's ``trace:<file stem>`` (its
    ``--profile`` is the unused default)."""
    setup = result.setup
    if setup.arrival.mode == "trace" and setup.profile_name:
        return setup.profile_name
    return setup.workload


def _public_host(host: str | None) -> str | None:
    return public_url(host) if host else None


def save_run(
    result: RunResult,
    runs_dir: str,
    out: TextIO,
    *,
    series: Callable[[], dict[str, Json] | None] | None = None,
    host: str | None = None,
    summary: dict[str, Json] | None = None,
) -> Path | None:
    """:func:`write_run_dir` (the time series from ``series()``), then one line naming the directory on ``out``.

    Never raises: a failure is one error line in the log, and the summary already printed
    or written elsewhere is not lost.
    """
    if not runs_dir:
        return None
    try:
        path = write_run_dir(runs_dir, result, timeseries=series() if series else None, host=host, summary=summary)
    except Exception as e:  # disk full, permissions, a bad value: never lose the run's end over this
        log.error("llmload: cannot write the run directory under %s: %s", runs_dir, e)
        return None
    out.write(f"llmload: run saved in {path} (llmload report {path} writes report.html)\n")
    return path


def _read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except OSError as e:
        raise RunDirError(f"{path}: cannot read ({e.strerror or e})") from None
    except orjson.JSONDecodeError as e:
        raise RunDirError(f"{path}: not valid JSON ({e})") from None


def load_run(path: str | os.PathLike[str]) -> Run:
    """A run from its directory, or from a summary JSON file (its series found through ``timeseries.path``)."""
    p = Path(path)
    if p.is_dir():
        summary_path = p / "summary.json"
        if not summary_path.exists():
            raise RunDirError(f"{p}: no summary.json here; give a run directory (runs/<timestamp>-<profile>) or a summary file")
        base = p
    elif p.exists():
        summary_path, base = p, p.parent
    else:
        raise RunDirError(f"{p}: no such run directory or summary file")
    summary = _read_json(summary_path)
    if not isinstance(summary, dict) or "overall" not in summary:
        raise RunDirError(f"{summary_path}: not an llmload summary (no 'overall' key)")
    schema = summary.get("schema")
    if schema is not None and not (isinstance(schema, str) and schema.startswith("llmload.summary/")):
        raise RunDirError(f"{summary_path}: not an llmload summary (schema {schema!r}, expected llmload.summary/2)")
    try:
        result = from_summary(summary)
    except SummaryError as e:
        raise RunDirError(f"{summary_path}: {e}") from None
    ts = summary.get("timeseries")
    ref = ts.get("path") if isinstance(ts, dict) else None  # a hand-edited summary may hold anything here
    series_path = base / ref if isinstance(ref, str) and ref else base / "timeseries.json"
    series = _read_json(series_path) if series_path.is_file() else None
    config_path = base / "config.json"
    config = _read_json(config_path) if p.is_dir() and config_path.is_file() else None
    series = series if isinstance(series, dict) else None  # optional files of another shape: as if absent
    config = config if isinstance(config, dict) else None
    name = base.resolve().name if p.is_dir() or p.stem == "summary" else p.stem
    return Run(path=base, name=name, result=result, timeseries=series, config=config)
