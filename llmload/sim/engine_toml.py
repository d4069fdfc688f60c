"""Reading an engine file (``llmload fit``'s ``engine.toml``, schema ``llmload.engine/1``) into
:class:`~llmload.sim.params.EngineParams`: its ``[params]`` table, every key an EngineParams field.

``llmload sim --engine-file FILE`` starts from it (engine flags still override), and
``llmload predict --engine FILE`` replays on it. The writer and the rest of the file (provenance,
fit quality) are :mod:`llmload.capacity.engine_file`'s.
"""

from __future__ import annotations

import sys
from pathlib import Path

from llmload.jsonvalue import Json

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from llmload.errors import ConfigError
from llmload.sim.params import FIELD_NAMES, EngineParams

__all__ = ["ENGINE_SCHEMA", "read_engine_file"]

ENGINE_SCHEMA = "llmload.engine/1"


def read_engine_file(path: str | Path, flag: str = "--engine-file") -> tuple[EngineParams, dict[str, Json]]:
    """(the parameters, the whole document); ConfigError naming the file and the fix."""
    p = Path(path)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{flag} {p}: cannot read it ({e.strerror or e}); write one with `llmload fit RUN`") from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{flag} {p}: not TOML ({e}); write one with `llmload fit RUN`") from e
    if doc.get("schema") != ENGINE_SCHEMA or not isinstance(doc.get("params"), dict):
        raise ConfigError(f"{flag} {p}: not an engine file (schema = {ENGINE_SCHEMA!r} and a [params] table); "
                          "write one with `llmload fit RUN`")  # fmt: skip
    unknown = sorted(set(doc["params"]) - set(FIELD_NAMES))
    if unknown:
        raise ConfigError(f"{flag} {p}: unknown parameter(s) {', '.join(unknown)} in [params]")
    try:
        return EngineParams(**doc["params"]), doc
    except TypeError as e:
        raise ConfigError(f"{flag} {p}: bad [params] ({e})") from e
