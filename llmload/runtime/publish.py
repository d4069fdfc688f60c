"""The run's outputs, from one summary: the console table, ``--summary-json`` and the run directory.

:func:`publish` turns the concluded :class:`~llmload.results.RunResult` into its summary dict once
(:func:`~llmload.results.to_summary`) and writes every output from it; a failure to write a file is
one error line in the log, never the loss of the run's end (the console table comes first).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TextIO

import orjson

from llmload.jsonvalue import Json
from llmload.report.console import render_summary
from llmload.results import RunResult, to_summary
from llmload.rundir import save_run

__all__ = ["publish"]

log = logging.getLogger("llmload")


def publish(
    result: RunResult,
    out: TextIO,
    *,
    summary_json: str | None = None,
    runs_dir: str | None = None,
    series: Callable[[], dict[str, Json] | None] | None = None,
    host: str | None = None,
) -> dict[str, Json]:
    """Write ``result``'s table on ``out``, its summary to ``summary_json`` and its run directory under
    ``runs_dir`` (with the time series ``series()``; ``host``: the target, its credentials dropped);
    returns the summary they were written from."""
    summary = to_summary(result)
    render_summary(result, out)
    out.flush()
    if summary_json:
        try:
            with open(summary_json, "wb") as f:
                f.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
        except OSError as e:
            log.error("llmload: cannot write --summary-json %s: %s", summary_json, e)
    if runs_dir:  # runs/<timestamp>-<profile>/: never fails the run (one error line)
        save_run(result, runs_dir, out, series=series, host=host, summary=summary)
    return summary
