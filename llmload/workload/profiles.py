"""Workload profiles: the request classes of a run and their weights in the mix.

A profile is a TOML (or JSON) file::

    name = "chat"                      # optional; defaults to the file name (stem)
    description = "what it models"     # optional
    thresholds = ["ttft_p99_ms<800"]   # optional: the run's pass/fail limits, as --threshold (docs/ci.md)

    [[classes]]
    name = "short"                     # required, unique, not "overall" (the whole run's row)
    weight = 3                         # required, > 0; the mix is a ratio of requests sent
    input_tokens = 50                  # synthetic prompts: an int or a distribution table
    output_tokens = 200                # an int, a distribution table, or "dataset"
    description = "..."                # optional
    prompt = "synthetic"               # default; or a dataset, below

    [[classes]]
    name = "rag"
    weight = 2
    prefix = {groups = 8, tokens = 1000, popularity = "zipf:1.1"}   # shared system prompts
    input_tokens = 100                 # with a prefix: the unique part after it
    output_tokens = 300

    [[classes]]
    name = "chat"
    weight = 1
    turns = {dist = "uniform", min = 2, max = 6}   # a conversation: a number or a distribution
    think_time_s = {dist = "exponential", mean = 5, max = 30}      # pause before each next turn
    input_tokens = 80                  # per turn: each new user message
    output_tokens = 250                # per turn: each reply's max_tokens
    slo = {ttft_ms = 300, tpot_ms = 25}  # optional: this class's SLOs (win key by key over --slo)

    [[classes]]
    name = "sharegpt"
    weight = 1
    prompt = {source = "dataset", path = "sharegpt.json", format = "sharegpt"}
    output_tokens = "dataset"          # the recorded assistant replies' estimated lengths
    turns = "dataset"                  # optional: replay each conversation turn by turn

Distribution tables are described in :mod:`llmload.workload.distributions` (``think_time_s``
takes the duration forms there), shared prefixes in :mod:`llmload.workload.prefixes`,
conversations in :mod:`llmload.workload.conversation`. A dataset class takes its prompts
(and their token estimates) from the file, so it has no ``input_tokens``; relative dataset
paths start at the profile file's folder. A class with ``turns`` is a conversation: its
weight is then a ratio of conversations started, and each turn re-sends the whole
conversation. The former ``shared_prefix_tokens = T`` is refused with how to rewrite it:
``prefix = {tokens = T}``, with ``input_tokens`` now counting only the part after the
prefix. ``images`` (:mod:`llmload.workload.images`) sends generated images with each request.
Built-in profiles (``default``, ``quadrants``) live beside this module under ``profiles/``.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.metrics.slo import SLO, slo_from_mapping
from llmload.metrics.thresholds import Threshold, parse_thresholds
from llmload.workload.agent import AgentSpec, parse_agent
from llmload.workload.datasets import FORMATS
from llmload.workload.distributions import Distribution, Duration, Fixed, parse_distribution, parse_duration
from llmload.workload.images import ImageSpec, parse_images
from llmload.workload.prefixes import PrefixSpec, parse_prefix

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = ["PromptSource", "Profile", "RequestClass", "available_profiles", "load_profile", "profile_from_dict"]

_TOP_KEYS = ("name", "description", "classes", "source", "thresholds")  # source: informational, written by to_dict
_CLASS_KEYS = ("name", "weight", "input_tokens", "output_tokens", "prompt", "prefix", "turns", "think_time_s", "slo",
               "description", "tools", "tool_calls", "fanout", "images")  # fmt: skip
_PROMPT_KEYS = ("source", "path", "format")
#: Class names the whole run's row goes by: the summary's and console's "overall", the web UI's "Overall".
RESERVED_CLASS_NAMES = ("overall",)  # compared without case and surrounding spaces


@dataclass(frozen=True, slots=True)
class PromptSource:
    """Where a class's prompts come from: ``synthetic`` text, or a ``dataset`` file."""

    kind: str = "synthetic"
    path: Path | None = None
    format: str = "auto"

    def to_dict(self) -> str | dict[str, str]:
        if self.kind == "synthetic":
            return "synthetic"
        return {"source": "dataset", "path": str(self.path), "format": self.format}


@dataclass(frozen=True, slots=True)
class RequestClass:
    """One kind of request. ``input_tokens`` is None for dataset prompts; ``output_tokens`` is
    None when the dataset supplies it (``output_tokens = "dataset"``). ``turns`` is None for
    single requests, else a distribution of turns per conversation or ``"dataset"`` (each
    record's own turns); ``think_time_s`` is the pause before each next turn (None: none)."""

    name: str
    weight: float
    input_tokens: Distribution | None
    output_tokens: Distribution | None
    prompt: PromptSource = PromptSource()
    prefix: PrefixSpec | None = None
    description: str = ""
    turns: Distribution | str | None = None
    think_time_s: Duration | None = None
    slo: SLO | None = None  # the class's own SLOs (llmload.metrics.slo)
    agent: AgentSpec | None = None  # an agent class's tools (llmload.workload.agent)
    images: ImageSpec | None = None  # the images each request carries (llmload.workload.images)

    @property
    def is_conversation(self) -> bool:
        return self.turns is not None

    def to_dict(self) -> dict[str, Json]:
        d: dict[str, Json] = {"name": self.name, "weight": self.weight}
        if self.description:
            d["description"] = self.description
        if self.input_tokens is not None:
            d["input_tokens"] = self.input_tokens.to_dict()
        d["output_tokens"] = "dataset" if self.output_tokens is None else self.output_tokens.to_dict()
        d["prompt"] = self.prompt.to_dict()
        if self.prefix is not None:
            d["prefix"] = self.prefix.to_dict()
        if self.turns is not None:
            d["turns"] = self.turns if isinstance(self.turns, str) else self.turns.to_dict()
        if self.think_time_s is not None:
            d["think_time_s"] = self.think_time_s.to_dict()
        if self.slo is not None:
            d["slo"] = self.slo.to_dict()
        images: dict[str, Json] = {} if self.images is None else {"images": self.images.to_dict()}
        return {**d, **images} if self.agent is None else {**d, **images, **self.agent.to_dict()}


@dataclass(frozen=True, slots=True)
class Profile:
    """A named set of request classes; ``source`` is the built-in name or the file path."""

    name: str
    description: str
    classes: tuple[RequestClass, ...]
    source: str = ""
    thresholds: tuple[Threshold, ...] = ()  # the run's pass/fail limits (llmload.metrics.thresholds)

    @property
    def weights(self) -> tuple[float, ...]:
        return tuple(c.weight for c in self.classes)

    @property
    def class_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classes)

    def to_dict(self) -> dict[str, Json]:
        """Plain data for run summaries; :func:`profile_from_dict` reads it back."""
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "classes": [c.to_dict() for c in self.classes],
            **({"thresholds": [t.expr for t in self.thresholds]} if self.thresholds else {}),
        }

    def describe(self) -> str:
        """One line per class: name, share of requests, input and output tokens, prompt source."""
        total = sum(self.weights)
        lines = [f"profile {self.name}" + (f": {self.description}" if self.description else "")]
        for c in self.classes:
            inp = "dataset" if c.input_tokens is None else _mean(c.input_tokens)
            out = "dataset" if c.output_tokens is None else _mean(c.output_tokens)
            extra = f", {c.prefix.describe()}" if c.prefix is not None else ""
            if c.turns is not None:
                turns = c.turns if isinstance(c.turns, str) else _mean(c.turns)
                think = f", think ~{c.think_time_s.mean:g} s" if c.think_time_s is not None else ""
                extra += f", {turns} turns per conversation{think}"
            src = c.prompt.kind if c.prompt.path is None else f"dataset {c.prompt.path.name}"
            lines.append(
                f"  {c.name}: {100 * c.weight / total:.0f}% of requests, in {inp}, out {out} tokens ({src}{extra})"
            )
        return "\n".join(lines)


def _mean(d: Distribution) -> str:
    return f"{d.mean:.0f}" if isinstance(d, Fixed) else f"~{d.mean:.0f}"


def available_profiles() -> tuple[str, ...]:
    """Names of the built-in profiles."""
    files = resources.files("llmload.workload").joinpath("profiles").iterdir()
    return tuple(sorted(f.name[:-5] for f in files if f.name.endswith(".toml")))


def load_profile(name_or_path: str | Path) -> Profile:
    """A built-in profile by name, or a profile file (``.toml`` or ``.json``) by path.

    Raises :class:`~llmload.errors.ProfileError` naming the file and field, and how to fix.
    """
    text = str(name_or_path)
    builtins = available_profiles()
    if not isinstance(name_or_path, Path) and text in builtins:
        data = resources.files("llmload.workload").joinpath("profiles").joinpath(f"{text}.toml").read_text("utf-8")
        return profile_from_dict(_parse_toml(data, f"profile '{text}'"), source=text)
    path = Path(name_or_path)
    if path.suffix.lower() not in (".toml", ".json"):
        raise ProfileError(
            f"unknown profile {text!r}: not a built-in ({', '.join(builtins)}) and not a .toml or .json file; pass a built-in name or a profile file"
        )
    where = f"profile '{path}'"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ProfileError(
            f"{where}: no such file; check the path, or use a built-in profile ({', '.join(builtins)})"
        ) from None
    except OSError as e:
        raise ProfileError(f"{where}: cannot read it ({e.strerror or e})") from None
    if path.suffix.lower() == ".json":
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise ProfileError(f"{where}: not valid JSON ({e})") from None
    else:
        data = _parse_toml(raw.decode("utf-8", errors="replace"), where)
    return profile_from_dict(data, source=str(path), base_dir=path.parent, default_name=path.stem)


def _parse_toml(text: str, where: str) -> Any:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{where}: not valid TOML ({e})") from None


def profile_from_dict(
    data: Any, *, source: str = "<dict>", base_dir: Path | None = None, default_name: str = ""
) -> Profile:
    """Validate plain data (a parsed profile file) into a :class:`Profile`.

    ``base_dir`` anchors relative dataset paths (the current directory when None). A
    ``source`` key (as :meth:`Profile.to_dict` writes it) is accepted and ignored.
    """
    where = f"profile '{source}'"
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: expected a table with name, description and [[classes]], got {type(data).__name__}")
    _check_keys(data, _TOP_KEYS, f"{where}: ")
    name = _str(data.get("name", default_name or source), f"{where}: name")
    description = _str(data.get("description", ""), f"{where}: description")
    classes = data.get("classes")
    if not isinstance(classes, list) or not classes:
        raise ProfileError(
            f"{where}: classes: needs at least one request class; add a [[classes]] table with name, weight, input_tokens, output_tokens"
        )
    parsed: list[RequestClass] = []
    seen: dict[str, int] = {}
    for i, c in enumerate(classes):
        rc = _parse_class(c, f"{where}: classes[{i}]", base_dir)
        if rc.name in seen:
            raise ProfileError(
                f"{where}: classes[{i}].name: duplicate class name {rc.name!r} (also classes[{seen[rc.name]}]); class names must be unique"
            )
        seen[rc.name] = i
        parsed.append(rc)
    limits = parse_thresholds(data.get("thresholds"), f"{where}: thresholds", ProfileError, classes=seen)
    return Profile(name, description, tuple(parsed), source, limits)


def _parse_class(c: Any, where: str, base_dir: Path | None) -> RequestClass:
    if not isinstance(c, dict):
        raise ProfileError(
            f"{where}: expected a table with name, weight, input_tokens, output_tokens, got {type(c).__name__}"
        )
    if "shared_prefix_tokens" in c:
        raise ProfileError(
            f"{where}.shared_prefix_tokens: replaced by prefix = {{tokens = {c['shared_prefix_tokens']!r}}}, "
            "where input_tokens counts only the unique part after the prefix (subtract the prefix from "
            "input_tokens to keep the same prompt lengths)"
        )
    _check_keys(c, _CLASS_KEYS, f"{where}.")
    for key in ("name", "weight", "output_tokens"):
        if key not in c:
            raise ProfileError(f"{where}: missing {key!r}; every class needs name, weight and output_tokens")
    name = _parse_name(c["name"], f"{where}.name")
    weight = c["weight"]
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not (weight > 0 and math.isfinite(weight)):
        raise ProfileError(
            f"{where}.weight: must be a number > 0, got {weight!r}; weights are the ratio of requests sent"
        )
    prompt = _parse_prompt(c.get("prompt", "synthetic"), f"{where}.prompt", base_dir)
    prefix = parse_prefix(c["prefix"], f"{where}.prefix") if "prefix" in c else None
    agent, out_raw = parse_agent(c, where)
    inp, out = _parse_lengths({**c, "output_tokens": out_raw} if agent is not None else c, prompt, prefix, where)
    description = _str(c.get("description", ""), f"{where}.description")
    turns, think = _parse_turns(c, prompt, where)
    slo = slo_from_mapping(c["slo"], f"{where}.slo", ProfileError) if "slo" in c else None
    return RequestClass(name, weight, inp, out, prompt, prefix, description, turns, think, slo, agent,
                        parse_images(c, where, base_dir))  # fmt: skip


def _parse_name(value: Any, where: str) -> str:
    """A class name: a non-empty string, not one the whole run's row goes by."""
    name = _str(value, where)
    if not name.strip():
        raise ProfileError(f"{where}: must be a non-empty string")
    if name.strip().lower() in RESERVED_CLASS_NAMES:
        raise ProfileError(f"{where}: {name!r} names the whole run's row (summary, tables, web UI): rename it")
    return name


def _parse_lengths(c: dict[str, Json], prompt: PromptSource, prefix: PrefixSpec | None,
                   where: str) -> tuple[Distribution | None, Distribution | None]:  # fmt: skip
    """``input_tokens`` (synthetic prompts only; None for a dataset's) and ``output_tokens`` (None: the dataset's)."""
    inp: Distribution | None = None
    if prompt.kind == "synthetic":
        if "input_tokens" not in c:
            raise ProfileError(f"{where}: missing 'input_tokens'; synthetic prompts need a length (an int or a distribution)")
        inp = parse_distribution(c["input_tokens"], f"{where}.input_tokens")
    elif "input_tokens" in c:
        raise ProfileError(f"{where}.input_tokens: a dataset class takes its prompts' lengths from the file; remove input_tokens")
    elif prefix is not None:
        raise ProfileError(f"{where}.prefix: applies to synthetic prompts only; remove it for a dataset class")
    if c["output_tokens"] != "dataset":
        return inp, parse_distribution(c["output_tokens"], f"{where}.output_tokens")
    if prompt.kind != "dataset":
        raise ProfileError(f'{where}.output_tokens: "dataset" needs prompt = {{source = "dataset", ...}}; '
                           "give an int or a distribution instead")  # fmt: skip
    return inp, None


def _parse_turns(
    c: dict[str, Json], prompt: PromptSource, where: str
) -> tuple[Distribution | str | None, Duration | None]:
    """A class's ``turns`` and ``think_time_s``: (None, None) for single requests."""
    if "turns" not in c:
        if "think_time_s" in c:
            raise ProfileError(
                f"{where}.think_time_s: is the pause between the turns of a conversation; add turns = N (or remove it)"
            )
        return None, None
    raw = c["turns"]
    if raw == "dataset":
        if prompt.kind != "dataset":
            raise ProfileError(
                f'{where}.turns: "dataset" replays a dataset\'s conversations and needs prompt = {{source = "dataset", ...}}; '
                "give a number or a distribution instead"
            )
        turns: Distribution | str = "dataset"
    else:
        turns = parse_distribution(raw, f"{where}.turns")
    think = parse_duration(c["think_time_s"], f"{where}.think_time_s") if "think_time_s" in c else None
    return turns, think


def _parse_prompt(p: Any, where: str, base_dir: Path | None) -> PromptSource:
    if p == "synthetic":
        return PromptSource()
    if not isinstance(p, dict):
        raise ProfileError(
            f'{where}: expected "synthetic" or {{source = "dataset", path = "...", format = "auto"}}, got {p!r}'
        )
    _check_keys(p, _PROMPT_KEYS, f"{where}.")
    if p.get("source") != "dataset":
        raise ProfileError(
            f'{where}.source: expected "dataset", got {p.get("source")!r}; for synthetic prompts write prompt = "synthetic"'
        )
    path = p.get("path")
    if not isinstance(path, str) or not path:
        raise ProfileError(f"{where}.path: expected the dataset file's path (a string), got {path!r}")
    fmt = p.get("format", "auto")
    if fmt not in FORMATS:
        raise ProfileError(f"{where}.format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = (base_dir or Path.cwd()) / resolved
    if not resolved.is_file():
        raise ProfileError(
            f"{where}.path: no such file '{resolved}'; relative paths start at the profile file's folder"
        )
    return PromptSource("dataset", resolved, fmt)


def _check_keys(d: dict[str, Json], allowed: tuple[str, ...], prefix: str) -> None:
    for key in d:
        if key not in allowed:
            raise ProfileError(f"{prefix}{key}: unknown key; allowed keys: {', '.join(allowed)}")


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise ProfileError(f"{where}: must be a string, got {value!r}")
    return value
