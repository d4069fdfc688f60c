"""``llmload run --repeat N``: the same test (or ladder) N times, one run directory, and their aggregate.

Each repetition is the command line without ``--repeat`` run as a child process (``python -m
llmload run ...``: ``--processes``, a ladder, thresholds all work as in a single run), with
``--seed S+i`` (S: ``--seed``, else a fresh one) and ``--summary-json`` into the run directory::

    runs/<UTC timestamp>-<profile>-x<N>/
      rep-1.summary.json ... rep-N.summary.json   each repetition's summary (and its .timeseries.json)
      summary.json, config.json, verdict.json, findings.json   the first repetition's, plus the ``repeat`` aggregate

``--repeat-pause`` apart. The aggregate (:mod:`llmload.results.repeat_aggregate`) goes into ``summary.json``
(and ``--summary-json``) as ``repeat``; the console prints its table. A first repetition
that ends in bad input (exit code 2) stops the rest. Ctrl-C ends the running repetition as a
single run's Ctrl-C does, and the aggregate covers the repetitions that finished.

The exit code: 2 when a repetition had bad input, else 1 when one exited 1 (a threshold
failed, or a request failed with ``--exit-code-on-error``), else 3 when one was inconclusive,
else 0.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import orjson

from llmload.config.repeat import RepeatConfig
from llmload.jsonvalue import Json
from llmload.report.repeat_table import render_repeat
from llmload.results import from_summary
from llmload.results.repeat_aggregate import aggregate
from llmload.rundir import create_run_dir, write_run_dir

__all__ = ["exit_code", "run_repeated"]


def exit_code(codes: list[int]) -> int:
    """The driver's exit code from the repetitions' (module docstring)."""
    for code in (2, 1, 3):
        if code in codes:
            return code
    return next((c for c in codes if c), 0)


def _command(cfg: RepeatConfig, seed: int, summary: Path) -> list[str]:
    return [sys.executable, "-m", "llmload", "run", *cfg.args, "--seed", str(seed), "--summary-json", str(summary),
            "--no-run-dir"]  # fmt: skip


def run_repeated(
    cfg: RepeatConfig,
    out: TextIO = sys.stdout,
    call: Callable[[list[str]], int] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Run the repetitions (``call`` runs one command line and returns its exit code) and write the aggregate."""
    call = call or _call
    seed0 = cfg.seed if cfg.seed is not None else random.randrange(1, 2**31 - cfg.runs)
    if cfg.runs_dir:
        folder = create_run_dir(cfg.runs_dir, time.time(), f"{cfg.profile}-x{cfg.runs}")
        stem = folder / "rep"
    else:
        target = Path(cfg.summary_json)
        folder = target.parent
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"{target.stem}.rep"
    seeds, paths, codes, summaries = [], [], [], []
    for i in range(cfg.runs):
        if i:
            out.write(f"llmload: pause of {cfg.pause_s:g} s before repetition {i + 1}\n")
            out.flush()
            sleep(cfg.pause_s)
        seed, path = seed0 + i, Path(f"{stem}-{i + 1}.summary.json")
        out.write(f"llmload: repetition {i + 1} of {cfg.runs} (seed {seed})\n")
        out.flush()
        try:
            code = call(_command(cfg, seed, path))
        except KeyboardInterrupt:  # the child had the same Ctrl-C and ended its test: keep what it wrote
            code, interrupted = 130, True
        else:
            interrupted = False
        seeds.append(seed)
        codes.append(code)
        if path.is_file():
            summaries.append(orjson.loads(path.read_bytes()))
            paths.append(path.name)
        if code == 2 or interrupted:
            out.write(f"llmload: repetition {i + 1} ended with exit code {code}: no further repetitions\n")
            break
    if not summaries:
        out.write("llmload: no repetition wrote a summary: nothing to aggregate\n")
        return exit_code(codes) or 1
    rep = aggregate(summaries, seeds=seeds, paths=paths, exit_codes=codes)
    combined: dict[str, Json] = {**summaries[0], "repeat": rep}
    render_repeat(rep, out)
    if cfg.summary_json:
        Path(cfg.summary_json).write_bytes(orjson.dumps(combined, option=orjson.OPT_INDENT_2))
    if cfg.runs_dir:
        write_run_dir(cfg.runs_dir, from_summary(combined), host=cfg.host, path=folder)
        out.write(f"llmload: {len(summaries)} repetitions saved in {folder} (llmload report {folder})\n")
    code = exit_code(codes)
    out.write(f"llmload: repeat: exit code {code} (per repetition: {', '.join(map(str, codes))})\n")
    return code


def _call(cmd: list[str]) -> int:
    """One repetition in a child process, its output on ours; a Ctrl-C waits for it to end its test."""
    proc = subprocess.Popen(cmd, env=os.environ.copy())
    try:
        return proc.wait()
    except KeyboardInterrupt:
        try:
            proc.wait()
        except KeyboardInterrupt:
            proc.wait()  # a second Ctrl-C went to the child too: it cuts its requests; wait for its summary
        raise
