"""``--repeat N`` and ``--repeat-pause DURATION``: the same test (or ladder) N times, validated before any load.

These flags belong to ``llmload run`` itself, not to the Locust process it starts: the driver
(:mod:`llmload.runtime.repeat_runner`) takes them off the command line (:func:`split_repeat`) and
runs the rest N times as child processes, each with a fresh seed. Where the repetitions go
(``--summary-json``, ``--runs-dir``, ``--no-run-dir``, ``--seed``) is read here too, from
the same command line, so that the driver never parses flags of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llmload.config.values import parse_duration
from llmload.errors import ConfigError

__all__ = ["HELP", "RepeatConfig", "split_repeat"]

DEFAULT_PAUSE = "10s"

HELP = f"""
repeated runs (llmload run, headless only):
  --repeat N            run the same test (or ladder) N times, each with a fresh seed (--seed S: S, S+1, ...),
                        into one run directory (each repetition's summary and an aggregate: per metric the median,
                        [min, max] and CV across runs; a ladder's safe level per run). Default: 1
  --repeat-pause DURATION
                        the pause between repetitions (the server drains). Default: {DEFAULT_PAUSE}
"""

#: flags whose value the driver replaces in each repetition's command line
_VALUED = ("--seed", "--summary-json", "--runs-dir")


@dataclass(frozen=True, slots=True)
class RepeatConfig:
    """``runs`` repetitions, ``pause_s`` apart; where they go and the first seed (None: a fresh one)."""

    runs: int
    pause_s: float
    args: tuple[str, ...]  # the command line of one repetition, without the flags below
    seed: int | None = None
    summary_json: str = ""
    runs_dir: str = "runs"
    profile: str = "default"
    host: str | None = None


def _take(args: list[str], name: str) -> tuple[str | None, list[str]]:
    """The value of ``name`` (last one wins; ``--name V`` or ``--name=V``) and ``args`` without it."""
    value, rest, i = None, [], 0
    while i < len(args):
        a = args[i]
        if a == name:
            if i + 1 >= len(args):
                raise ConfigError(f"{name}: needs a value")
            value, i = args[i + 1], i + 2
            continue
        if a.startswith(name + "="):
            value = a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    return value, rest


def _value(args: Sequence[str], name: str) -> str | None:
    return _take(list(args), name)[0]


def split_repeat(argv: Sequence[str]) -> RepeatConfig | None:
    """The repetitions ``argv`` asks for (None: no ``--repeat``, or ``--repeat 1`` without a pause); raises ConfigError."""
    count, rest = _take(list(argv), "--repeat")
    pause, rest = _take(rest, "--repeat-pause")
    if count is None:
        if pause is not None:
            raise ConfigError(f"--repeat-pause {pause}: only with --repeat N (N >= 2)")
        return None
    runs = _runs(count)
    pause_s = parse_duration(pause if pause is not None else DEFAULT_PAUSE, "--repeat-pause") or 0.0
    if runs == 1:
        return None if pause is None else RepeatConfig(1, pause_s, tuple(rest))
    _check_runnable(rest)
    seed = _seed(_value(rest, "--seed"))
    summary_json = _value(rest, "--summary-json") or ""
    runs_dir = "" if "--no-run-dir" in rest else (_value(rest, "--runs-dir") or "runs")
    if not runs_dir and not summary_json:
        raise ConfigError("--repeat with --no-run-dir: give --summary-json PATH (the repetitions are kept beside it)")
    for name in _VALUED:
        _, rest = _take(rest, name)
    rest = [a for a in rest if a != "--no-run-dir"]
    profile = _value(rest, "--profile") or "default"
    profile = profile[:-5].rsplit("/", 1)[-1] if profile.endswith(".toml") else profile  # a profile file: its stem
    return RepeatConfig(runs, pause_s, tuple(rest), seed, summary_json, runs_dir, profile, _value(rest, "-H") or
                        _value(rest, "--host"))  # fmt: skip


def _runs(count: str) -> int:
    """``--repeat``'s value: a whole number >= 1."""
    try:
        runs = int(count)
    except ValueError:
        runs = 0
    if runs < 1:
        raise ConfigError(f"--repeat {count!r}: must be a whole number >= 1 (how many times to run the test)")
    return runs


def _check_runnable(rest: Sequence[str]) -> None:
    """Repetitions run headless, in one process tree: no web UI, no ``--master``/``--worker``."""
    if "--headless" not in rest:
        raise ConfigError("--repeat: runs headless only; add --headless (the web UI starts each test by hand)")
    for role in ("--master", "--worker"):
        if role in rest:
            raise ConfigError(f"--repeat with {role}: not supported; use --processes N on one machine, "
                              "or repeat the distributed run from a script")  # fmt: skip


def _seed(text: str | None) -> int | None:
    """The first repetition's ``--seed`` (None: not given, or < 0, which asks for a fresh one)."""
    if text is None:
        return None
    try:
        seed = int(text)
    except ValueError:
        raise ConfigError(f"--seed {text!r}: must be a whole number") from None
    return seed if seed >= 0 else None
