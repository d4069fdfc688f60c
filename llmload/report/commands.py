"""The ``llmload report`` and ``llmload compare`` commands (the CLI edge: these may print).

``llmload report RUN [--out DIR] [--format html,md,json]`` writes ``report.html``,
``report.md`` and ``report.json`` for a run directory (or a summary JSON file) into the
run directory or ``DIR``. ``llmload compare RUN_A RUN_B [--markdown | --json] [--out FILE]``
prints the before/after table.
"""

from __future__ import annotations

import argparse
import io
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from llmload.redact import mask, remember_environment
from llmload.report import compare, html_page, markdown
from llmload.report.data import build_report
from llmload.report.model_section import model_report
from llmload.rundir import Run, RunDirError, load_run

__all__ = ["FORMATS", "analysed", "compare_main", "report_main", "write_report"]

#: format -> (file name, writer of (report data, text stream))
FORMATS = {
    "html": ("report.html", html_page.write_html),
    "md": ("report.md", markdown.write_markdown),
    "json": ("report.json", lambda r, out: out.write(orjson.dumps(r, option=orjson.OPT_INDENT_2).decode() + "\n")),
}


def analysed(run: Run) -> Run:
    """``run`` itself, or, when its summary predates the analysis (no ``verdict``), a copy analysed now."""
    result = run.result
    if result.judgement is not None:
        return run
    from llmload.analysis import analyze
    from llmload.results import series_from_timeseries, with_step_signals

    try:
        result = with_step_signals(result, *series_from_timeseries(run.timeseries))
        judgement = analyze(result)  # with the run's --degradation
    except Exception as e:  # an old or hand-made summary the analysis cannot read: report what is there
        note = f"this summary has no analysis and it could not be run now ({type(e).__name__}: {e})"
        return replace(run, result=replace(run.result, warnings=(*run.result.warnings, note)))
    note = "this summary had no verdict: the analysis ran in llmload report (without per-step confidence intervals)"
    return replace(run, result=replace(result, judgement=judgement, warnings=(*result.warnings, note)))


def write_report(run: Run, out_dir: str | Path | None = None, formats: tuple[str, ...] = tuple(FORMATS)) -> list[Path]:
    """Write the report files of ``run`` into ``out_dir`` (default: the run's directory); their paths.

    A summary without the analysis (from before it existed) is analysed first (:func:`analysed`).
    """
    report = build_report(analysed(run)) | model_report(run.path)  # a fitted run: its engine model
    target = Path(out_dir) if out_dir else run.path
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        name, writer = FORMATS[fmt]
        buf = io.StringIO()
        writer(report, buf)
        path = target / name
        path.write_text(mask(buf.getvalue()), encoding="utf-8")  # guard: a key a server echoed (llmload.redact)
        paths.append(path)
    return paths


def _load(path: str, prog: str) -> Run | None:
    try:
        return load_run(path)
    except RunDirError as e:
        sys.stderr.write(f"{prog}: error: {e}\n")
        return None


def _formats(text: str, parser: argparse.ArgumentParser) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        parser.error(f"--format {text!r}: choose from {', '.join(FORMATS)} (comma-separated)")
    return chosen


def report_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="llmload report",
        description="Write report.html (self-contained, charts as inline SVG), report.md (phenomenon -> root cause "
        "-> change -> effect record) and report.json for a run.",
    )
    p.add_argument("run", metavar="RUN_DIR", help="a run directory (runs/<timestamp>-<profile>) or a summary JSON file")
    p.add_argument("--out", metavar="DIR", default="", help="where to write the files (default: the run directory)")
    p.add_argument("--format", default="html,md,json", help="which files, comma-separated (default: %(default)s)")
    ns = p.parse_args(argv)
    formats = _formats(ns.format, p)
    remember_environment()  # a run saved before llmload masked echoed keys
    run = _load(ns.run, "llmload report")
    if run is None:
        return 2
    try:
        paths = write_report(run, ns.out or None, formats)
    except OSError as e:
        sys.stderr.write(f"llmload report: error: cannot write the report: {e}\n")
        return 1
    except (AttributeError, KeyError, TypeError, ValueError) as e:  # a value of the wrong type the loader let through
        sys.stderr.write(f"llmload report: error: {ns.run}: not a readable llmload summary ({type(e).__name__}: {e})\n")
        return 2
    for path in paths:
        sys.stdout.write(f"{path}\n")
    return 0


def compare_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="llmload compare",
        description="Before/after: TTFT and TPOT p50/p99, output tok/s and error rate of two runs, per ladder step "
        "(matched by users) and overall, with deltas.",
    )
    p.add_argument("run_a", metavar="RUN_A", help="the run before (directory or summary JSON)")
    p.add_argument("run_b", metavar="RUN_B", help="the run after (directory or summary JSON)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true", help="print a Markdown table instead of the console table")
    out.add_argument("--json", action="store_true", help="print the comparison as JSON (llmload.compare/1)")
    p.add_argument("--out", metavar="FILE", default="", help="write to FILE instead of standard output")
    ns = p.parse_args(argv)
    remember_environment()  # a run saved before llmload masked echoed keys
    a, b = _load(ns.run_a, "llmload compare"), _load(ns.run_b, "llmload compare")
    if a is None or b is None:
        return 2
    for run, path in ((a, ns.run_a), (b, ns.run_b)):
        try:
            compare.compare_runs(run, run)
        except (AttributeError, KeyError, TypeError, ValueError) as e:  # a value of the wrong type the loader let through
            sys.stderr.write(f"llmload compare: error: {path}: not a readable llmload summary ({type(e).__name__}: {e})\n")
            return 2
    result = compare.compare_runs(analysed(a), analysed(b))  # an old summary without a verdict: analysed now
    writer: Any = compare.write_json if ns.json else compare.write_markdown if ns.markdown else compare.write_console
    buf = io.StringIO()
    writer(result, buf)
    text = mask(buf.getvalue())  # guard: a key a server echoed (llmload.redact)
    if not ns.out:
        sys.stdout.write(text)
        return 0
    try:
        with open(ns.out, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        sys.stderr.write(f"llmload compare: error: cannot write {ns.out}: {e}\n")
        return 1
    sys.stdout.write(f"{ns.out}\n")
    return 0
