"""The console's warm-up lines: what the run left out (``--warmup``), its TTFT beside the measured part's, its errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

__all__ = ["render_warmup"]


def _ms(v: Any) -> str:
    return f"{v:.0f}" if isinstance(v, (int, float)) else "-"


def render_warmup(block: Mapping[str, Any] | None, out: TextIO) -> None:
    """``block``: the summary's ``warmup`` (None: no warm-up, nothing written)."""
    if not block:
        return
    errors = block.get("errors") or 0
    out.write(
        f"warm-up (not measured): {block.get('requests', 0)} requests in {block.get('duration_s', 0):g} s"
        f"{f', {errors} failed' if errors else ''}; TTFT p50 {_ms(block.get('ttft_p50_ms'))} / p99 "
        f"{_ms(block.get('ttft_p99_ms'))} ms, measured part p50 {_ms(block.get('measured_ttft_p50_ms'))} / p99 "
        f"{_ms(block.get('measured_ttft_p99_ms'))} ms\n"
    )
    examples = block.get("errors_examples") or {}
    for kind, n in (block.get("errors_by_kind") or {}).items():
        out.write(f"  warm-up errors: {kind} {n}, e.g. {examples.get(kind) or '(no message)'}\n")
