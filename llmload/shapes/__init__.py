"""Load shapes: the concurrency ladder."""

from __future__ import annotations

from llmload.shapes.ladder import BASELINE_STEP, LadderPlan, LadderShape, StepWindow, parse_ladder

__all__ = ["BASELINE_STEP", "LadderPlan", "LadderShape", "StepWindow", "parse_ladder"]
