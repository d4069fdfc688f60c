"""What-if overrides of an engine model: ``--set NAME=VALUE`` or ``--set NAME=xFACTOR``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, replace
from typing import Any

from llmload.errors import ConfigError
from llmload.sim.params import EngineParams

__all__ = ["apply_overrides"]

_TYPES = {f.name: f.type for f in fields(EngineParams)}


def apply_overrides(params: EngineParams, sets: Iterable[str]) -> EngineParams:
    changes: dict[str, Any] = {}  # field -> its value, of the field's own type (bool, int, float, str)
    for item in sets:
        name, eq, text = item.partition("=")
        name = name.strip().replace("-", "_")
        if not eq or name not in _TYPES:
            raise ConfigError(
                f"--set {item!r}: expected NAME=VALUE or NAME=xFACTOR with NAME an engine parameter "
                "(max_num_seqs, prefill_tps, step_base_ms, per_seq_ms, per_kv_token_us, host_overhead_ms, kv_blocks, ...)"
            )
        current = getattr(params, name)
        kind = type(current)
        try:
            if kind is bool:
                if text.lower() not in ("true", "false", "on", "off", "1", "0"):
                    raise ValueError
                value: object = text.lower() in ("true", "on", "1")
            elif text.startswith("x"):
                value = kind(current * float(text[1:]))
            else:
                value = kind(float(text)) if kind is int else kind(text)
        except ValueError:
            raise ConfigError(f"--set {item!r}: {text!r} is not a {kind.__name__} value (or xFACTOR)") from None
        if name == "kv_blocks" and text.startswith("x"):
            value = int(params.num_kv_blocks * float(text[1:]))
        changes[name] = value
    return replace(params, **changes) if changes else params
