"""The run's own setup and the load generator's state, typed: what every reader of a result asks of the run.

Read once from a live run (:meth:`RunSetup.from_run`: the :class:`~llmload.config.RunConfig`, the
workload :class:`~llmload.workload.profiles.Profile` and the target host) and once from a saved
summary (:meth:`RunSetup.from_summary`: its ``config`` and ``profile`` dicts), so the analysis and the
writers never parse flags or profile classes out of dicts. Both give the same :class:`RunSetup` for
the same run. Every default is the flag table's (:mod:`llmload.config.flags`).

===================  ======================================================================
type                 what
===================  ======================================================================
:class:`RunSetup`    api, model, host, workload, seed, degradation, SLOs and attainment target,
                     arrival, ladder, classes; :attr:`~RunSetup.slos` the one per-class SLO table;
                     ``config``/``profile``: the summary's dicts as written (for the writer only)
:class:`ClassSetup`  one profile class: weight, its own SLO, how it shares prefixes, its prompt mean
:class:`LadderSetup` ``--ladder``/``--rate-ladder``: levels, rates, step and warm-up times
:class:`ArrivalSetup`  closed loop, an open-loop process at a rate, or a trace replay (:class:`TraceSetup`)
:class:`LoadState`   the load generator: a master's workers, the lost ones, saturated processes
:class:`WrittenViews`  the summary writer's names for the above (``result.config``, ``result.workers``...)
===================  ======================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from llmload.config.flags import flag
from llmload.config.values import public_url
from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.metrics.slo import SLO, class_slos, parse_slo_text, slo_from_mapping
from llmload.workload.distributions import parse_distribution

if TYPE_CHECKING:
    from llmload.config.run import RunConfig
    from llmload.workload.profiles import Profile

__all__ = ["ArrivalSetup", "ClassSetup", "LadderSetup", "LoadState", "PrefixSetup", "RunSetup", "TraceSetup",
           "WrittenViews"]  # fmt: skip

#: ``--degradation``'s default, from the flag table (a summary without it was judged with this).
DEFAULT_DEGRADATION: float = flag("degradation").default
#: ``--slo-attainment``'s default, from the flag table.
DEFAULT_SLO_ATTAINMENT: float = flag("slo_attainment").default


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True, slots=True)
class PrefixSetup:
    """A class's shared openings: ``groups`` prefixes of ``tokens`` tokens (the profile's ``prefix``)."""

    groups: int = 1
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class ClassSetup:
    """One profile class. ``slo``: its own limits (the flag's fill the rest: :attr:`RunSetup.slos`);
    ``input_tokens_mean``: the profile's mean prompt (None: dataset prompts); ``spec``: the class as the
    profile wrote it (two runs compare classes by it)."""

    name: str
    weight: float | None = None
    slo: SLO | None = None
    prefix: PrefixSetup | None = None
    conversation: bool = False
    input_tokens_mean: float | None = None
    spec: Mapping[str, Any] = field(default_factory=dict)

    @property
    def sharing(self) -> str | None:
        """How the class shares prompt prefixes: ``"conversation"``, ``"prefix groups"`` or None."""
        if self.conversation:
            return "conversation"
        return "prefix groups" if self.prefix is not None else None

    @classmethod
    def from_dict(cls, c: Mapping[str, Any]) -> ClassSetup:
        """A class of a summary's ``profile.classes``."""
        prefix = c.get("prefix")
        p = PrefixSetup(int(prefix.get("groups") or 1), int(prefix.get("tokens") or 0)) if isinstance(prefix, Mapping) else None
        slo = slo_from_mapping(c["slo"], "profile.slo") if c.get("slo") else None
        return cls(str(c.get("name")), _num(c.get("weight")), slo, p, c.get("turns") is not None,
                   _mean(c.get("input_tokens")), dict(c))  # fmt: skip


def _mean(value: Any) -> float | None:
    """The mean of a profile's ``input_tokens`` (a number or a distribution table); None for dataset prompts."""
    try:
        return parse_distribution(value, "input_tokens").mean
    except (ProfileError, TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class LadderSetup:
    """A ladder: ``levels`` users per step (a rate ladder's cap, repeated) and, for a rate ladder, ``rates``."""

    levels: tuple[int, ...] = ()
    step_s: float | None = None
    warmup_s: float | None = None
    stop_on_breach: bool | None = None
    baseline_requests: int | None = None
    rates: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, Json]:
        """The summary's ``config.ladder`` (:meth:`~llmload.config.ladder.LadderConfig.public_dict`)."""
        out: dict[str, Json] = {"levels": list(self.levels), "step_s": self.step_s, "warmup_s": self.warmup_s,
                               "stop_on_breach": self.stop_on_breach, "baseline_requests": self.baseline_requests}  # fmt: skip
        if self.rates:
            out["rates"] = list(self.rates)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LadderSetup:
        stop = d.get("stop_on_breach")
        return cls(tuple(int(n) for n in d.get("levels") or ()), _num(d.get("step_s")), _num(d.get("warmup_s")),
                   bool(stop) if stop is not None else None, _int(d.get("baseline_requests")),
                   tuple(float(r) for r in d.get("rates") or ()))  # fmt: skip


@dataclass(frozen=True, slots=True)
class TraceSetup:
    """``--trace``: the file, its speedup, and how many entries were replayed (None: all)."""

    file: str | None = None
    speedup: float = 1.0
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class ArrivalSetup:
    """How requests were sent: ``closed`` loop, or an open-loop ``mode`` at ``rate`` (None: a rate ladder's
    or a trace's); ``burstiness`` a gamma process's shape; ``trace`` a trace replay's source."""

    mode: str = "closed"
    rate: float | None = None
    burstiness: float | None = None
    rate_levels: tuple[float, ...] = ()
    trace: TraceSetup | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ArrivalSetup:
        t = d.get("trace")
        trace = None
        if isinstance(t, Mapping):
            speedup = _num(t.get("speedup"))
            trace = TraceSetup(str(t["file"]) if t.get("file") is not None else None, 1.0 if speedup is None else speedup,
                               _int(t.get("limit")))  # fmt: skip
        return cls(str(d.get("mode") or "closed"), _num(d.get("rate")), _num(d.get("burstiness")),
                   tuple(float(r) for r in d.get("rate_levels") or ()), trace)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RunSetup:
    """What the run was asked to do (module docstring). ``workload``: ``--profile`` as given (a file, a built-in
    name); ``profile_name``: the profile's own name (a trace replay's ``trace:<file>``). None: not recorded."""

    api: str | None = None
    model: str | None = None
    host: str | None = None
    workload: str | None = None
    profile_name: str | None = None
    seed: int | None = None
    max_tokens_cap: int | None = None
    ignore_eos: bool | None = None
    degradation: float = DEFAULT_DEGRADATION
    slo: SLO | None = None  # --slo: every class's default limits
    slo_attainment: float = DEFAULT_SLO_ATTAINMENT
    arrival: ArrivalSetup = field(default_factory=ArrivalSetup)
    ladder: LadderSetup | None = None
    classes: tuple[ClassSetup, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict, repr=False)  # the summary's "config", as written
    profile: Mapping[str, Any] = field(default_factory=dict, repr=False)  # the summary's "profile", as written

    @property
    def slos(self) -> dict[str, SLO] | None:
        """The SLOs each class was judged on (its own over ``--slo``, key by key); None: the run had none."""
        return class_slos({c.name: c.slo for c in self.classes}, self.slo)

    def cls(self, name: str) -> ClassSetup | None:
        return next((c for c in self.classes if c.name == name), None)

    @classmethod
    def from_run(cls, config: RunConfig, profile: Profile, host: str | None = None) -> RunSetup:
        """The setup of a live run: ``config``, its workload ``profile`` and the target ``host`` (credentials dropped)."""
        host = public_url(host) if host else None
        ladder, arrival = config.ladder, config.arrival
        spec = arrival.spec
        trace = TraceSetup(arrival.trace.path, arrival.trace.speedup, arrival.trace.limit) if arrival.trace else None
        return cls(
            api=config.api,
            model=config.adapter.model,
            host=host,
            workload=config.profile,
            profile_name=profile.name,
            seed=config.seed,
            max_tokens_cap=config.max_tokens_cap,
            ignore_eos=config.adapter.ignore_eos,
            degradation=config.degradation,
            slo=config.slo,
            slo_attainment=config.slo_attainment,
            arrival=ArrivalSetup(spec.mode, arrival.rate, spec.burstiness if spec.mode == "gamma" else None,
                                 arrival.rate_levels, trace) if spec.open_loop else ArrivalSetup(),  # fmt: skip
            ladder=LadderSetup(ladder.levels, ladder.step_s, ladder.warmup_s, ladder.stop_on_breach,
                               ladder.baseline_requests, ladder.rates) if ladder is not None else None,  # fmt: skip
            classes=tuple(
                ClassSetup(c.name, c.weight, c.slo, PrefixSetup(c.prefix.groups, c.prefix.tokens) if c.prefix else None,
                           c.turns is not None, c.input_tokens.mean if c.input_tokens is not None else None, c.to_dict())
                for c in profile.classes
            ),  # fmt: skip
            config={**config.public_dict(), "host": host},
            profile=profile.to_dict(),
        )

    @classmethod
    def from_summary(cls, config: Mapping[str, Any] | None, profile: Mapping[str, Any] | None) -> RunSetup:
        """The setup a summary's ``config`` and ``profile`` record (a missing value: None, or its flag's default).

        A value of the wrong type raises TypeError/ValueError; an unreadable SLO a
        :class:`~llmload.errors.ConfigError` naming it.
        """
        c, p = dict(config or {}), dict(profile or {})
        flag_slo = c.get("slo")
        slo = parse_slo_text(flag_slo, "config.slo") if isinstance(flag_slo, str) else (
            slo_from_mapping(flag_slo, "config.slo") if flag_slo else None)  # fmt: skip
        ladder, eos = c.get("ladder"), c.get("ignore_eos")
        return cls(
            api=_str(c.get("api")),
            model=_str(c.get("model")),
            host=_str(c.get("host")) or None,
            workload=_str(c.get("profile")),
            profile_name=_str(p.get("name")),
            seed=_int(c.get("seed")),
            max_tokens_cap=_int(c.get("max_tokens_cap")),
            ignore_eos=bool(eos) if eos is not None else None,
            degradation=_num(c.get("degradation")) or DEFAULT_DEGRADATION,
            slo=slo,
            slo_attainment=_num(c.get("slo_attainment")) or DEFAULT_SLO_ATTAINMENT,
            arrival=ArrivalSetup.from_dict(c.get("arrival") or {}),  # not an object: AttributeError, as the writers had
            ladder=LadderSetup.from_dict(ladder) if ladder else None,
            classes=tuple(ClassSetup.from_dict(k) for k in p.get("classes") or () if isinstance(k, Mapping)),
            config=c,
            profile=p,
        )


def _str(v: Any) -> str | None:
    return str(v) if v is not None else None


@dataclass(frozen=True, slots=True)
class LoadState:
    """The load generator at the end: ``workers`` a master's (None: standalone), ``workers_lost`` those that
    stopped reporting (None: standalone), and the processes saturated for SUSTAINED_REPORTS reports in a row."""

    workers: int | None = None
    workers_lost: tuple[str, ...] | None = None
    saturated: bool = False
    saturated_processes: tuple[str, ...] = ()


class WrittenViews:
    """The names a summary writes the setup and the load state under, read from ``setup``/``load``: for the
    writers (:mod:`llmload.results.summary`, the console, report.json); the analysis reads the typed fields."""

    __slots__ = ()
    setup: RunSetup
    load: LoadState

    @property
    def config(self) -> Mapping[str, Any]:
        return self.setup.config

    @property
    def profile(self) -> Mapping[str, Any]:
        return self.setup.profile

    @property
    def workers(self) -> int | None:
        return self.load.workers

    @property
    def workers_lost(self) -> tuple[str, ...] | None:
        return self.load.workers_lost

    @property
    def client_saturated(self) -> bool:
        return self.load.saturated

    @property
    def client_saturated_processes(self) -> tuple[str, ...]:
        return self.load.saturated_processes
