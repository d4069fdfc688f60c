"""``llmload predict``'s workload flags, read as in ``llmload run``: ``--profile``, ``-u``/``-t``,
``--ladder``, ``--rate-ladder``, ``--arrival``, ``--rate``, ``--burstiness``, ``--step-time``,
``--step-warmup``, ``--seed``, ``--slo``, ``--slo-attainment``, ``--max-tokens-cap``, ``--trace`` -> a
:class:`~llmload.capacity.drive.Workload`, the profile's summary form and the summary's config block (its
``arrival`` and ``ladder`` in ``llmload run``'s form). Every profile class llmload runs: synthetic, shared
prefixes, datasets, conversations and agents (closed loop only, as ``llmload run``; agents:
:mod:`llmload.capacity.agent_session`, ``--tool-call-share``), images (:mod:`llmload.capacity.image_cost`)."""

from __future__ import annotations

import argparse
from typing import Any

from locust.util.timespan import parse_timespan

from llmload.capacity.drive import ClassSpec, StepSpec, Workload
from llmload.capacity.image_cost import image_cost
from llmload.capacity.trace_arrivals import trace_arrivals
from llmload.config.arrival import parse_rates
from llmload.config.flags import flag
from llmload.config.values import parse_levels
from llmload.errors import ConfigError
from llmload.jsonvalue import Json
from llmload.metrics.slo import parse_slo_text
from llmload.results.arrival_block import trace_replay
from llmload.sim.tools import DEFAULT_TOOL_CALL_SHARE
from llmload.workload.datasets import load_dataset
from llmload.workload.profiles import RequestClass, load_profile
from llmload.workload.traces import load_trace, trace_profile

__all__ = ["add_slo_arguments", "add_workload_arguments", "class_spec", "slo_config", "workload_from_args"]


def add_workload_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload (as in llmload run)")
    g.add_argument("--profile", default="default", help="workload profile: a built-in name or a TOML file")
    g.add_argument("-u", "--users", type=int, default=1, help="concurrent users (closed loop) (default 1)")
    g.add_argument("-t", "--run-time", default="60s", help="duration without a ladder (default 60s)")
    g.add_argument("--ladder", default="", help="concurrency ladder, e.g. 1,5,10,20")
    g.add_argument("--rate-ladder", default="", help="offered rates (requests/s) one step each (open loop)")
    g.add_argument("--arrival", choices=("closed", "constant", "poisson", "gamma"), default="closed")
    g.add_argument("--rate", type=float, default=None, help="open loop: requests/s")
    g.add_argument("--burstiness", type=float, default=flag("burstiness").default, help="gamma shape of --arrival gamma")
    g.add_argument("--step-time", default="5m", help="ladder step duration (default 5m)")
    g.add_argument("--step-warmup", default="30s", help="unmeasured start of each step (default 30s)")
    g.add_argument("--seed", type=int, default=0, help="seed of the lengths drawn from distributions")
    g.add_argument("--trace", default="", help="replay a trace (Mooncake JSON Lines, as llmload run --trace): each "
                   "entry at its time with its lengths; repeated hash_ids reach the prefix cache")  # fmt: skip
    g.add_argument("--trace-speedup", type=float, default=flag("trace_speedup").default, help="replay N times faster")
    g.add_argument("--trace-limit", type=int, default=flag("trace_limit").default, help="the first N entries (0: all)")
    g.add_argument("--max-tokens-cap", type=int, default=0, help="cap every request's max_tokens (0: no cap)")
    g.add_argument("--tool-call-share", type=float, default=DEFAULT_TOOL_CALL_SHARE,
                   help="agent classes: the share of answers that are tool calls (default %(default)s, as llmload sim)")
    add_slo_arguments(g)


def add_slo_arguments(g: Any) -> None:
    g.add_argument(
        "--slo",
        default="",
        metavar="KEY=MS,...",
        help="SLOs of a good request, e.g. ttft_ms=800,tpot_ms=25 (as llmload run; a profile class's own win)",
    )
    g.add_argument("--slo-attainment", type=float, default=flag("slo_attainment").default,
                   help="the share of finished requests that must be good (default %(default)s)")  # fmt: skip


def slo_config(ns: argparse.Namespace) -> dict[str, Json]:
    """The summary's ``config.slo`` and ``config.slo_attainment`` from ``--slo``/``--slo-attainment`` (checked)."""
    slo = parse_slo_text(ns.slo, "--slo")
    if not 0 < ns.slo_attainment <= 1:
        raise ConfigError(f"--slo-attainment {ns.slo_attainment:g}: must be a share in (0, 1], e.g. 0.99")
    return {"slo": slo.to_dict() if slo is not None else None, "slo_attainment": ns.slo_attainment}


def _span(text: str, flag: str) -> float:
    try:
        s = float(parse_timespan(text))
    except ValueError:
        s = -1.0
    if s <= 0:
        raise ConfigError(f"{flag} {text!r}: must be a duration > 0 such as 30s or 5m")
    return s


def workload_from_args(ns: argparse.Namespace) -> tuple[Workload, dict[str, Json], dict[str, Json]]:
    if getattr(ns, "trace", ""):
        return _trace_workload(ns)
    profile = load_profile(ns.profile)
    cap = getattr(ns, "max_tokens_cap", 0) or 0
    if cap < 0:
        raise ConfigError(f"--max-tokens-cap {cap}: must be >= 1 (or 0 for no cap)")
    classes = tuple(class_spec(c, ns.profile, cap or None) for c in profile.classes)
    open_loop = ns.arrival != "closed"
    if ns.ladder and ns.rate_ladder:
        raise ConfigError("--ladder and --rate-ladder: give one")
    if ns.rate_ladder and not open_loop:
        raise ConfigError("--rate-ladder: needs an open-loop arrival; add --arrival poisson (or constant, gamma)")
    if open_loop and not ns.rate_ladder and not ns.rate:
        raise ConfigError(f"--arrival {ns.arrival}: needs --rate R or --rate-ladder R1,R2,...")
    if ns.users < 1:
        raise ConfigError(f"-u {ns.users}: must be >= 1")
    if open_loop and any(c.conversation for c in classes):
        names = ", ".join(c.name for c in classes if c.conversation)
        raise ConfigError(f"--arrival {ns.arrival}: profile {ns.profile!r} has conversation classes ({names}); "
                          "open-loop arrivals send single requests: use --arrival closed (-u = active sessions) or "
                          "single-turn classes")  # fmt: skip
    config: dict[str, Json] = {
        "api": "predicted",
        "model": "engine model",
        "profile": ns.profile,
        "seed": ns.seed,
        "degradation": flag("degradation").default,
        "max_tokens_cap": cap or None,
        **slo_config(ns),
    }
    if ns.ladder or ns.rate_ladder:
        step, warm = _span(ns.step_time, "--step-time"), _span(ns.step_warmup, "--step-warmup")
        if warm >= step:
            raise ConfigError(f"--step-warmup {ns.step_warmup}: must be shorter than --step-time {ns.step_time}")
        if ns.ladder:
            steps = tuple(StepSpec(n, step, warm) for n in parse_levels(ns.ladder))
            config["ladder"] = {"levels": [s.users for s in steps], "step_s": step, "warmup_s": warm,
                                "stop_on_breach": False, "baseline_requests": 0}  # fmt: skip
        else:
            steps = tuple(StepSpec(ns.users, step, warm, r) for r in parse_rates(ns.rate_ladder))
            # as llmload run's config: a rate ladder is a ladder of -u (its cap) per step with its rates
            config["ladder"] = {"levels": [s.users for s in steps], "step_s": step, "warmup_s": warm,
                                "stop_on_breach": False, "baseline_requests": 0, "rates": [s.rate for s in steps]}  # fmt: skip
    else:
        steps = (StepSpec(ns.users, _span(ns.run_time, "-t"), 0.0, ns.rate if open_loop else None),)
    if open_loop:  # as llmload run's config.arrival
        config["arrival"] = {"mode": ns.arrival, "rate": None if ns.rate_ladder else ns.rate,
                             **({"burstiness": ns.burstiness} if ns.arrival == "gamma" else {}),
                             **({"rate_levels": [s.rate for s in steps]} if ns.rate_ladder else {})}  # fmt: skip
    in_flight = ns.users if open_loop else 0  # as in llmload run: -u caps the requests in flight of an open loop
    w = Workload(classes, steps, ns.arrival, ns.burstiness, ns.seed, in_flight, tool_call_share=_share(ns))
    return w, profile.to_dict(), config


def _share(ns: argparse.Namespace) -> float:
    share = getattr(ns, "tool_call_share", None)
    share = DEFAULT_TOOL_CALL_SHARE if share is None else share
    if not 0 <= share <= 1:
        raise ConfigError(f"--tool-call-share {share:g}: must be a share in 0..1, e.g. 0.75")
    return float(share)


def class_spec(c: RequestClass, where: str, cap: int | None = None) -> ClassSpec:
    """A profile class in token counts (:mod:`llmload.capacity.session_replay`); its dataset read (a bad one: one error
    line naming it), its images as tokens, its agent settings."""
    images = image_cost(c.images, f"--profile {where}: class {c.name!r}") if c.images is not None else None
    dataset = None
    if c.prompt.kind == "dataset":
        assert c.prompt.path is not None
        dataset = load_dataset(c.prompt.path, c.prompt.format, turns=c.is_conversation)
        if c.output_tokens is None and (missing := dataset.first_missing_output) is not None:
            raise ConfigError(f"dataset '{dataset.path}': {missing} has no output length, but class {c.name!r} has "
                              'output_tokens = "dataset"; add "output_tokens" to every record, or set output_tokens '
                              "in the profile")  # fmt: skip
    return ClassSpec(c.name, c.weight, c.input_tokens, c.output_tokens, c.prefix, dataset, c.turns, c.think_time_s,
                     cap, images, c.agent)  # fmt: skip


def _trace_workload(ns: argparse.Namespace) -> tuple[Workload, dict[str, Json], dict[str, Json]]:
    """``--trace``: one class (the trace's), one step as long as the trace at its speedup, open loop capped by -u."""
    if ns.ladder or ns.rate_ladder or ns.arrival != "closed" or ns.rate:
        raise ConfigError("--trace: the trace is the load (its own times); drop --ladder, --rate-ladder, --arrival "
                          "and --rate")  # fmt: skip
    if ns.profile != "default":
        raise ConfigError(f"--profile {ns.profile} with --trace: the trace replaces the profile")
    if not ns.trace_speedup > 0:
        raise ConfigError(f"--trace-speedup {ns.trace_speedup:g}: must be > 0, e.g. 2 (twice as fast)")
    if ns.users < 1 or ns.trace_limit < 0 or ns.max_tokens_cap < 0:
        raise ConfigError("-u must be >= 1, --trace-limit and --max-tokens-cap >= 0")
    trace = load_trace(ns.trace, ns.trace_limit or None)
    profile = trace_profile(trace)
    c = profile.classes[0]
    arrivals = trace_arrivals(trace, ns.trace_speedup, ns.max_tokens_cap or None)
    span = trace.duration_ms / 1000.0 / ns.trace_speedup
    replay = trace_replay(trace, ns.trace_speedup)
    w = Workload((ClassSpec(c.name, 1.0, c.input_tokens, c.output_tokens),), (StepSpec(ns.users, span + 1e-6, 0.0),),
                 "trace", seed=ns.seed, max_in_flight=ns.users, trace=arrivals, trace_replay=replay)  # fmt: skip
    trace_dict: dict[str, Json] = {"file": str(trace.path), "speedup": ns.trace_speedup,
                                  "limit": ns.trace_limit or None}  # fmt: skip
    config: dict[str, Json] = {
        "api": "predicted",
        "model": "engine model",
        "profile": profile.name,
        "seed": ns.seed,
        "degradation": flag("degradation").default,
        "max_tokens_cap": ns.max_tokens_cap or None,
        "arrival": {"mode": "trace", "rate": None, "trace": trace_dict},
        **slo_config(ns),
    }
    return w, profile.to_dict(), config
