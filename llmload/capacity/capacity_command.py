"""``llmload fit RUN`` and ``llmload predict --engine engine.toml`` (the CLI edge: these print).

``fit`` reads a run (directory or summary, and its ``--records-jsonl``), fits the engine model
(:mod:`llmload.capacity.fit`), replays the run on it (:mod:`llmload.capacity.quality`) and
writes ``engine.toml`` (:mod:`llmload.capacity.engine_file`). ``predict`` replays a workload on
an engine file, with ``--set NAME=VALUE`` (or ``=xF``: times F) overrides and ``--replicas K``,
and writes a normal summary (``--summary-json``, a run directory, the console table).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llmload.errors import LlmloadError
from llmload.jsonvalue import Json

__all__ = ["fit_main", "predict_main"]


def _fail(prog: str, e: Exception) -> int:
    sys.stderr.write(f"llmload {prog}: error: {e}\n")
    return 2


def fit_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="llmload fit", description="Fit the engine model to a measured run (docs/capacity.md)"
    )
    p.add_argument("run", help="a run directory (runs/<stamp>-<profile>/) or its summary.json")
    p.add_argument(
        "--records-jsonl", default="", help="the run's --records-jsonl file (default: records*.jsonl beside it)"
    )
    p.add_argument("-o", "--out", default="", help="where to write the engine file (default: RUN/engine.toml)")
    ns = p.parse_args(argv)
    from llmload.capacity.engine_file import write_engine
    from llmload.capacity.fit import fit_measured
    from llmload.capacity.measured import load_measured
    from llmload.capacity.quality import fit_quality, worst_error

    run = Path(ns.run)
    if not run.exists():
        return _fail("fit", LlmloadError(f"{run}: no such run directory or summary; pass runs/<stamp>-<profile>/"))
    try:
        m = load_measured(run, ns.records_jsonl)
        f = fit_measured(m)
        quality = fit_quality(m, f.params)
    except LlmloadError as e:
        return _fail("fit", e)
    out = Path(ns.out) if ns.out else (run if run.is_dir() else run.parent) / "engine.toml"
    header = {
        "source": m.source,
        "requests": len(m.reqs),
        "steps": len(m.steps),
        "rows": f.rows,
        "residual_rel_rms": round(f.rel_rms, 4),
        "replay_worst_p50_error": round(worst_error(quality), 4),
        "warnings": "; ".join(f.warnings),
    }
    provenance = [{k: v for k, v in dataclasses.asdict(x).items() if v not in (None, "")} for x in f.provenance]
    fitted_range = [{"name": "fitted_range", "max_concurrency": f.max_concurrency,
                     "max_input_tokens": f.max_input, "max_output_tokens": f.max_output}]  # fmt: skip
    try:
        write_engine(out, f.params, [*provenance, *fitted_range], quality, header)
    except OSError as e:
        return _fail("fit", LlmloadError(f"-o {out}: cannot write it ({e.strerror or e}); choose another path"))
    w = sys.stdout.write
    w(f"llmload fit: {len(m.reqs)} requests in {len(m.steps)} step(s) from {m.source}\n")
    for x in f.provenance:
        err = f" +- {x.stderr:.3g}" if x.stderr is not None else ""
        w(f"  {x.name:<18} {x.value!s:>12}{err:<12} {x.how:<9} {x.note}\n")
    w("  step users class       TTFT p50 meas/replay (err)       TPOT p50 meas/replay (err)\n")
    for q in quality:
        w(f"  {q['step']:>4} {q['users']:>5} {q['class']:<10} {_pair(q, 'ttft')}  {_pair(q, 'tpot')}\n")
    for warning in f.warnings:
        w(f"  warning: {warning}\n")
    w(f"llmload fit: wrote {out} (worst per-step p50 replay error {100 * worst_error(quality):.1f} %)\n")
    return 0


def _pair(q: Mapping[str, Json], metric: str) -> str:
    """A fit-quality row's measured / replayed p50 of ``metric`` and their error."""
    a, b, e = q.get(f"{metric}_p50_ms"), q.get(f"{metric}_p50_replayed_ms"), q.get(f"{metric}_p50_error")
    if a is None or b is None:
        return f"{'-':<31}"
    return f"{a:>9.1f} / {b:>9.1f} ({100 * (e if isinstance(e, (int, float)) else 0):+6.1f} %)"


def predict_main(argv: list[str]) -> int:
    from llmload.capacity.workload_args import add_workload_arguments

    p = argparse.ArgumentParser(
        prog="llmload predict",
        description="Replay a workload on a fitted engine model (llmload fit) and write a normal summary, "
        "marked predicted (docs/capacity.md)",
    )
    p.add_argument("--engine", required=True, help="the engine file (llmload fit's engine.toml)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="what-if: override an engine parameter, e.g. max_num_seqs=64, or scale it: prefill_tps=x1.5",
    )
    p.add_argument("--replicas", type=int, default=1, help="engines behind a router (default 1)")
    p.add_argument("--router", choices=("round-robin", "least-loaded"), default="round-robin")
    add_workload_arguments(p)
    p.add_argument("--summary-json", default="", help="write the predicted summary here")
    p.add_argument("--runs-dir", default="", help="also write a run directory under DIR (report/compare/gate read it)")
    p.add_argument("--quiet", action="store_true", help="no console table")
    p.add_argument(
        "--check",
        default="",
        metavar="MEASURED",
        help="score the prediction against a real run of the same workload (its directory or summary): "
        "per step and class, the error of TTFT/TPOT p50/p99 and throughput, and the safe level",
    )
    p.add_argument("--check-json", default="", help="where to write the check (default: beside MEASURED, "
                   "predict-check.json)")  # fmt: skip
    ns = p.parse_args(argv)
    try:
        return _predict(ns)
    except LlmloadError as e:
        return _fail("predict", e)


def _predict(ns: argparse.Namespace) -> int:
    from llmload.capacity.engine_file import engine_hash, read_engine, table
    from llmload.capacity.overrides import apply_overrides
    from llmload.capacity.predict import extrapolation, predicted_result
    from llmload.capacity.workload_args import workload_from_args
    from llmload.errors import ConfigError
    from llmload.results.setup import RunSetup

    params, doc = read_engine(ns.engine)
    params = apply_overrides(params, ns.set)
    measured = _measured(ns.check) if ns.check else None  # before predicting: a bad path is the first thing said
    if ns.replicas < 1:
        raise ConfigError(f"--replicas {ns.replicas}: must be >= 1")
    w, profile, config = workload_from_args(ns)
    fitted = table(doc, "provenance", "fitted_range")
    extra = extrapolation(w, ns.replicas, fitted)
    predicted = {
        "engine_file": str(ns.engine),
        "engine_sha256": engine_hash(ns.engine),
        "overrides": list(ns.set),
        "replicas": ns.replicas,
        "router": ns.router,
        "extrapolates": extra,
        # what the fit did not pin (defaults) and what it warned about: a what-if resting on them says so
        "assumed": sorted(
            k for k, v in table(doc, "provenance").items() if isinstance(v, Mapping) and v.get("how") == "assumed"
        ),
        "fit_warnings": [x for x in str(doc.get("warnings") or "").split("; ") if x],
        # agent classes: the share of answers that were taken as tool calls (llmload.capacity.agent_session)
        **({"tool_call_share": w.tool_call_share} if any(c.agent is not None for c in w.classes) else {}),
    }
    result = predicted_result(params, w, replicas=ns.replicas, router=ns.router, profile=profile, config=config,
                              predicted=predicted, slos=RunSetup.from_summary(config, profile).slos)  # fmt: skip
    if extra:
        result = dataclasses.replace(
            result, warnings=(*result.warnings, "prediction extrapolates: " + "; ".join(extra))
        )
    _write(result, ns)
    if measured is not None:
        _check(result, measured, ns)
    return 0


def _measured(path: str) -> Any:
    from llmload.rundir import load_run

    try:
        return load_run(path)
    except LlmloadError as e:
        raise LlmloadError(f"--check {e}") from None


def _check(result: Any, measured: Any, ns: argparse.Namespace) -> None:
    import orjson

    from llmload.capacity.check import check, check_doc, check_table
    from llmload.errors import ConfigError

    c = check(result, measured.result)
    w = sys.stdout.write
    w(f"llmload predict --check: predicted vs measured ({ns.check}); error = predicted / measured - 1\n")
    for line in check_table(c):
        w(f"  {line}\n")
    src = Path(ns.check)
    out = Path(ns.check_json) if ns.check_json else (
        src / "predict-check.json" if src.is_dir() else src.with_name(f"{src.stem}.predict-check.json"))  # fmt: skip
    try:
        out.write_bytes(orjson.dumps(check_doc(c, str(ns.engine), str(ns.check)), option=orjson.OPT_INDENT_2))
    except OSError as e:
        raise ConfigError(f"--check-json {out}: cannot write it ({e.strerror or e}); choose another path") from e
    w(f"llmload predict --check: written to {out}\n")


def _write(result: Any, ns: argparse.Namespace) -> None:
    import orjson

    from llmload.errors import ConfigError
    from llmload.results import to_summary
    from llmload.rundir import write_run_dir

    if not ns.quiet:
        from llmload.report.console import render_summary

        p = result.extra.get("predicted") or {}
        assumed = f" (assumed, not fitted: {', '.join(p['assumed'])})" if p.get("assumed") else ""
        sys.stdout.write(f"llmload predict: PREDICTED from the engine model, not measured{assumed}\n")
        render_summary(result, sys.stdout)
    if ns.summary_json:
        try:
            Path(ns.summary_json).write_bytes(orjson.dumps(to_summary(result), option=orjson.OPT_INDENT_2))
        except OSError as e:
            raise ConfigError(f"--summary-json {ns.summary_json}: cannot write it ({e.strerror or e})") from e
        sys.stdout.write(f"llmload predict: summary written to {ns.summary_json}\n")
    if ns.runs_dir:
        path = write_run_dir(ns.runs_dir, result)
        sys.stdout.write(f"llmload predict: run directory {path}\n")
