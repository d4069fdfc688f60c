"""One fitted parameter's value and provenance."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Param"]


@dataclass(frozen=True, slots=True)
class Param:
    """``how``: ``measured`` (read off a signal), ``fitted`` (least squares, ``stderr`` its standard error)
    or ``assumed`` (the default: ``note`` says which signal would pin it)."""

    name: str
    value: float | int | bool | str
    how: str
    stderr: float | None = None
    note: str = ""
