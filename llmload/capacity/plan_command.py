"""``llmload plan``: how many replicas for N users (or R req/s) of this mix under these SLOs?

Every option is checked (engine file, overrides, profile, SLOs, durations) before the first
prediction; a bad one is one error line and exit 2. Each replica count tried is a predicted
run (:func:`~llmload.capacity.predict.predicted_result`) of one step: ``-u`` users (closed
loop) or ``--rate`` requests/s (open loop), ``--warmup`` unmeasured then ``-t`` measured, as
``llmload run --ladder N --step-time W+T --step-warmup W`` would run it. The search (every count up to
the first that meets, and one more) and the answer: :mod:`llmload.capacity.replicas`. Exit 0 with an answer, 1 when no count up to
``--max-replicas`` meets the goal.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any, NoReturn

from llmload.config.flags import flag
from llmload.errors import ConfigError, LlmloadError

__all__ = ["plan_main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, as every other bad input (argparse adds its usage)
        self.exit(2, f"llmload plan: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    from llmload.capacity.workload_args import add_slo_arguments

    p = _Parser(
        prog="llmload plan",
        description="How many replicas a load needs under SLOs (or within --degradation of the baseline), "
        "searched with predict on a fitted engine model (docs/capacity.md)",
    )
    p.add_argument("--engine", required=True, help="the engine file (llmload fit's engine.toml)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="what-if override (as predict)")
    p.add_argument("--router", choices=("round-robin", "least-loaded"), default="round-robin")
    p.add_argument("--profile", default="default", help="workload profile: a built-in name or a TOML file")
    p.add_argument(
        "-u",
        "--users",
        type=int,
        default=None,
        help="concurrent users (closed loop); with --rate: the cap on requests in flight (default none)",
    )
    p.add_argument("--rate", type=float, default=None, help="offered requests/s (open loop, --arrival poisson)")
    p.add_argument(
        "--arrival",
        choices=("constant", "poisson", "gamma"),
        default="poisson",
        help="with --rate: the arrival process (default poisson)",
    )
    p.add_argument("--burstiness", type=float, default=flag("burstiness").default, help="gamma shape of --arrival gamma")
    p.add_argument("-t", "--run-time", default="60s", help="the measured time per prediction (default 60s)")
    p.add_argument("--warmup", default="20s", help="the unmeasured start of each prediction (default 20s)")
    p.add_argument("--seed", type=int, default=0, help="seed of the lengths drawn from distributions")
    p.add_argument("--tool-call-share", type=float, default=None,
                   help="agent classes: the share of answers that are tool calls (default 0.75, as llmload sim)")  # fmt: skip
    add_slo_arguments(p)
    p.add_argument(
        "--degradation",
        type=float,
        default=flag("degradation").default,
        help="without --slo: TTFT and TPOT p50 within (1 + this) x one user alone (default %(default)s)",
    )
    p.add_argument("--max-replicas", type=int, default=64, help="the most replicas to try (default 64)")
    p.add_argument("--json", default="", help="also write the answer and every trial here")  # fmt: skip
    return p


def plan_main(argv: list[str]) -> int:
    try:
        ns = _parser().parse_args(argv)
    except SystemExit as e:  # --help (0), or a flag argparse refused (2, its one line said)
        return e.code if isinstance(e.code, int) else 2
    try:
        return _plan(ns)
    except LlmloadError as e:
        sys.stderr.write(f"llmload plan: error: {e}\n")
        return 2


def _workload_ns(ns: argparse.Namespace, users: int, rate: float | None) -> argparse.Namespace:
    from llmload.capacity.workload_args import _span

    run, warm = int(_span(ns.run_time, "-t")), int(_span(ns.warmup, "--warmup"))  # whole seconds, as Locust's spans
    return argparse.Namespace(
        profile=ns.profile, users=users, run_time=f"{run + warm}s", seed=ns.seed, burstiness=ns.burstiness,
        ladder="" if rate else str(users), rate_ladder=f"{rate:g}" if rate else "", rate=rate,
        arrival=ns.arrival if rate else "closed", step_time=f"{run + warm}s", step_warmup=f"{warm}s",
        slo=ns.slo, slo_attainment=ns.slo_attainment, tool_call_share=ns.tool_call_share,
    )  # fmt: skip


def _check(ns: argparse.Namespace) -> None:
    if ns.users is None and ns.rate is None:
        raise ConfigError("give the load: -u USERS (closed loop) or --rate REQ_PER_S (open loop)")
    if ns.users is not None and ns.users < 1:
        raise ConfigError(f"-u {ns.users}: must be >= 1")
    if ns.rate is not None and not ns.rate > 0:
        raise ConfigError(f"--rate {ns.rate:g}: must be > 0 requests/s")
    if ns.max_replicas < 1:
        raise ConfigError(f"--max-replicas {ns.max_replicas}: must be >= 1")
    if not ns.burstiness > 0:
        raise ConfigError(f"--burstiness {ns.burstiness:g}: must be > 0 (the gamma shape; 1 = Poisson)")
    if not ns.degradation > 0:
        raise ConfigError(f"--degradation {ns.degradation:g}: must be > 0, e.g. 0.5 (+50 %)")
    if ns.json and not Path(ns.json).parent.is_dir():
        raise ConfigError(f"--json {ns.json}: its folder does not exist; create it or choose another path")


def _plan(ns: argparse.Namespace) -> int:
    from llmload.capacity.engine_file import read_engine, table
    from llmload.capacity.overrides import apply_overrides
    from llmload.capacity.predict import extrapolation, predicted_result
    from llmload.capacity.replicas import Goal, answer_line, describe, search, trial_of, worse_above
    from llmload.capacity.workload_args import workload_from_args
    from llmload.results.setup import RunSetup

    _check(ns)
    params, doc = read_engine(ns.engine)
    params = apply_overrides(params, ns.set)
    rate = ns.rate
    w, profile, config = workload_from_args(_workload_ns(ns, ns.users or 1, rate))
    if rate:
        w = dataclasses.replace(w, max_in_flight=ns.users or 0)
    slos = RunSetup.from_summary(config, profile).slos

    def measured(replicas: int, workload: Any, judged: Any) -> Any:
        r = predicted_result(params, workload, replicas=replicas, router=ns.router, profile=profile,
                             config=config, slos=judged)  # fmt: skip
        return r.steps[0].overall if r.steps else r.overall

    if slos is not None:
        slo_limits = table(config, "slo")  # the --slo limits that are set (numbers)
        slo = tuple((k, v) for k, v in slo_limits.items() if isinstance(v, (int, float)))
        goal = Goal(target=ns.slo_attainment, slo=slo)
    else:  # one user alone on one replica: the baseline
        base = measured(1, workload_from_args(_workload_ns(ns, 1, None))[0], None)
        goal = Goal(degradation=ns.degradation, baseline_ttft_ms=base.lat("ttft").p50,
                    baseline_tpot_ms=base.lat("tpot").p50)  # fmt: skip
    best, trials = search(lambda k: trial_of(k, measured(k, w, slos), goal), ns.max_replicas)
    load = f"{ns.rate:g} req/s" if rate else f"{ns.users} users"
    limits = ",".join(f"{k}={v:g}" for k, v in goal.slo)
    what = f"SLO {limits}, attainment >= {100 * ns.slo_attainment:g} %" if goal.slo_mode else (
        f"TTFT/TPOT p50 within +{100 * ns.degradation:g} % of one user alone "
        f"({goal.baseline_ttft_ms or 0:.0f} / {goal.baseline_tpot_ms or 0:.1f} ms)")  # fmt: skip
    out = sys.stdout.write
    out(f"llmload plan: {load} of profile {ns.profile} on {ns.engine} ({ns.router}); {what}\n")
    for t in trials:
        out(f"  {'meets ' if t.meets else 'misses'} {describe(t, goal)} ({t.requests} requests)\n")
    extra = extrapolation(w, best.replicas, table(doc, "provenance", "fitted_range")) if best else []
    if extra:
        out(f"  warning: prediction extrapolates: {'; '.join(extra)}\n")
    notes = worse_above(best, trials, goal) if best else []
    for note in notes:
        out(f"  note: {note}\n")
    line = answer_line(best, trials, goal, ns.max_replicas)
    out(f"answer: {line}\n")
    if ns.json:
        _write_json(ns.json, best, trials, goal, line, extra, notes)
    return 0 if best is not None else 1


def _write_json(
    path: str, best: Any, trials: list[Any], goal: Any, line: str, extra: list[str], notes: list[str]
) -> None:
    import orjson

    doc = {
        "answer": best.replicas if best is not None else None,
        "line": line,
        "goal": dataclasses.asdict(goal),
        "extrapolates": extra,
        "notes": notes,
        "trials": [dataclasses.asdict(t) for t in trials],
    }
    try:
        Path(path).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    except OSError as e:
        raise ConfigError(f"--json {path}: cannot write it ({e.strerror or e})") from e
