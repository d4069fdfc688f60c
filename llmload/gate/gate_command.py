"""``llmload gate BASELINE CANDIDATE [--max-regression ...] [--json] [--junit FILE] [--allow-different KEYS]``.

Reads two run directories or summary files (:func:`llmload.rundir.load_run`), decides
(:mod:`.decide`) and writes the console table (or JSON with ``--json``; ``--out FILE`` writes
that JSON to a file besides the table) and, with ``--junit FILE``, JUnit XML. Exit codes:
0 PASS, 1 FAIL, 2 bad input (a path, a flag), 3 INCONCLUSIVE.
"""

from __future__ import annotations

import argparse
import sys

import orjson

from llmload.errors import ConfigError
from llmload.gate.decide import COMPARED, decide
from llmload.gate.figures import describe
from llmload.gate.limits import DEFAULT_LIMITS, limit_text, parse_limits
from llmload.gate.output import to_dict, write_console, write_junit
from llmload.rundir import RunDirError, load_run

__all__ = ["gate_main"]

_DEFAULTS = ",".join(f"{k}={limit_text(k, v).lstrip('+').replace(' ', '')}" for k, v in DEFAULT_LIMITS.items())


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload gate",
        description="Decide PASS / FAIL / INCONCLUSIVE for CI: did the candidate run regress beyond the limits, "
        "beyond the noise (95 %% intervals of each percentile, per class and overall)? Exit code 0 pass, 1 fail, "
        "2 bad input, 3 inconclusive. docs/ci.md.",
    )
    p.add_argument("baseline", metavar="BASELINE", help="the reference run (run directory or summary JSON)")
    p.add_argument("candidate", metavar="CANDIDATE", help="the run to judge (run directory or summary JSON)")
    p.add_argument("--max-regression", default="", metavar="METRIC=LIMIT,...",
                   help=f"allowed regressions over the defaults ({_DEFAULTS.replace('%', '%%')}); METRIC=off drops one, "
                   "'none,...' starts from nothing")  # fmt: skip
    p.add_argument("--allow-different", default="", metavar="KEY,...",
                   help=f"compare even when these differ: {', '.join(COMPARED)}")
    p.add_argument("--strict-tails", action="store_true",
                   help="let a single run's p90/p99 regression beyond its sampling noise FAIL (a quiet, dedicated "
                   "machine); by default it is INCONCLUSIVE: tails also move with the machine's load run to run")
    p.add_argument("--json", action="store_true", help="print the result as JSON (llmload.gate/1) instead of the table")
    p.add_argument("--out", default="", metavar="FILE", help="also write the JSON result to FILE")
    p.add_argument("--junit", default="", metavar="FILE", help="also write JUnit XML to FILE (CI test reports)")
    p.add_argument("--verbose", action="store_true", help="list every check, passed ones too")
    return p


def gate_main(argv: list[str]) -> int:
    ns = _parser().parse_args(argv)
    try:
        limits = parse_limits(ns.max_regression)
        allow = [k.strip() for k in ns.allow_different.split(",") if k.strip()]
        unknown = [k for k in allow if k not in COMPARED]
        if unknown:
            raise ConfigError(f"--allow-different {', '.join(unknown)}: unknown; one of {', '.join(COMPARED)}")
        base, cand = load_run(ns.baseline), load_run(ns.candidate)
    except (ConfigError, RunDirError) as e:
        sys.stderr.write(f"llmload gate: error: {e}\n")
        return 2
    result = decide(base.result, cand.result, limits, allow, ns.strict_tails)
    runs = {"baseline": {"path": ns.baseline, **describe(base.result)},
            "candidate": {"path": ns.candidate, **describe(cand.result)}}  # fmt: skip
    doc = to_dict(result, runs)
    try:
        if ns.out:
            with open(ns.out, "wb") as f:
                f.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        if ns.junit:
            write_junit(result, ns.junit)
    except OSError as e:
        sys.stderr.write(f"llmload gate: error: cannot write {e.filename}: {e.strerror}\n")
        return 2
    if ns.json:
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        write_console(result, runs, sys.stdout, ns.verbose)
    return result.exit_code
