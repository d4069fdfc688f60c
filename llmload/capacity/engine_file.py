"""``engine.toml``: a fitted engine model, with every parameter's provenance and the fit's quality.

::

    schema = "llmload.engine/1"
    source = "runs/.../records.jsonl"

    [params]                 # every EngineParams field: what `llmload sim --engine-file` and `predict` load
    max_num_seqs = 8
    ...

    [provenance.step_base_ms]   # how each fitted/measured/assumed parameter was obtained
    value = 32.8
    how = "fitted"              # measured | fitted | assumed
    stderr = 1.2
    note = "..."

    [[quality]]                 # measured vs replayed, per step and class
    step = 0 ...

:func:`read_engine` reads ``[params]`` back into :class:`~llmload.sim.params.EngineParams`
(unknown keys refused); :func:`engine_hash` is the SHA-256 of the file's bytes (a prediction names it).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from llmload.jsonvalue import Json
from llmload.sim.engine_toml import ENGINE_SCHEMA, read_engine_file
from llmload.sim.params import EngineParams

__all__ = ["SCHEMA", "engine_hash", "read_engine", "table", "write_engine"]

SCHEMA = ENGINE_SCHEMA


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else '"nan"'
    if v is None:
        return '""'
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{s}"'


def _table(name: str, d: Mapping[str, Any]) -> list[str]:
    return [f"[{name}]", *(f"{k} = {_value(v)}" for k, v in d.items() if v is not None), ""]


def write_engine(
    path: Path,
    params: EngineParams,
    provenance: Iterable[Mapping[str, Any]],
    quality: Iterable[Mapping[str, Any]],
    header: Mapping[str, Any],
) -> None:
    lines = [f"# llmload engine model fitted by `llmload fit` ({SCHEMA}); docs/capacity.md", f'schema = "{SCHEMA}"']
    lines += [f"{k} = {_value(v)}" for k, v in header.items()]
    lines.append("")
    lines += _table("params", {f.name: getattr(params, f.name) for f in fields(EngineParams)})
    for p in provenance:
        lines += _table(f"provenance.{p['name']}", {k: v for k, v in p.items() if k != "name"})
    for q in quality:
        lines += ["[[quality]]", *(f"{k} = {_value(v)}" for k, v in q.items() if v is not None), ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def read_engine(path: str | Path, flag: str = "--engine") -> tuple[EngineParams, dict[str, Json]]:
    """(the parameters, the whole document) of an engine file (:func:`llmload.sim.engine_toml.read_engine_file`)."""
    return read_engine_file(path, flag)


def engine_hash(path: str | Path) -> str:
    return "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()


def table(doc: Mapping[str, Json], *path: str) -> Mapping[str, Json]:
    """The engine file's table at ``path`` (``table(doc, "provenance", "fitted_range")``); empty where missing."""
    for key in path:
        value = doc.get(key)
        doc = value if isinstance(value, Mapping) else {}
    return doc
