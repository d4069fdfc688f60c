"""Request traces in the Mooncake format: read and validate, turn entries into prompts, generate examples.

**Format** (JSON Lines, one request per line, as in Mooncake's published traces)::

    {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59]}

* ``timestamp``: when the request arrives, in milliseconds from the start of the trace (an
  int or a float ≥ 0; lines in non-decreasing order). The first entry is at most
  :data:`MAX_START_MS` (a day) from the start and every entry at most :data:`MAX_TIMESTAMP_MS`
  (366 days): a clock time (Unix epoch milliseconds, 1.7e12) or a wrong unit would have the
  replay idle for decades; ``llmload trace rebase`` (``rebase=True``) makes a trace's times
  relative to its first entry;
* ``input_length``, ``output_length``: prompt and output tokens (ints ≥ 1);
* ``hash_ids`` (optional): ids (ints ≥ 0) of the prompt's consecutive blocks of
  :data:`BLOCK_TOKENS` (512) tokens, the last one possibly partial, so at most
  ``ceil(input_length / 512)`` of them. Two requests whose blocks have equal ids share
  those blocks' content: that is how a trace records prefix reuse (a shared system prompt,
  the earlier turns of a conversation).

**Sessions** (optional): an entry with ``turn`` and ``session`` keys is one turn of a recorded conversation or
agent session (its keys, and how a replay sends them: :mod:`llmload.workload.trace_sessions`);
:attr:`Trace.arrivals` are the single entries and the sessions' first turns.

Other keys are ignored (converters may keep metadata). Bad input is refused before any
load with one line naming the file, the line and the field (:func:`load_trace`).

**Prompts** (:class:`TracePrompts`): block id ``h`` becomes 512 fixed words that depend only
on the run's seed and ``h`` (:func:`~llmload.workload.prompts.seeded_words`, N words ≈ N
tokens), so equal ids give identical token blocks in every user and worker process, and a
server's prefix cache sees the trace's reuse. A partial last block is the head of its
block's words. Tokens beyond the listed blocks (or a whole prompt without ``hash_ids``)
are unique to the request (drawn from the caller's RNG, starting with a random tag).

**Generator** (:func:`generate_trace`): a synthetic trace with the structure of a chat
service: Poisson arrivals, a few system prompts shared by popularity (Zipf), and
follow-up turns that extend an earlier request's full blocks with new ones.
``llmload trace generate`` (:mod:`llmload.workload.trace_tool`) writes it; with its defaults,
the small example shipped in ``examples/traces/``.

**Replay** (``--trace``): :func:`trace_profile` is the run's profile (one class, ``trace``,
whose lengths are the trace's means: the requests' own lengths come from their entries),
and the open-loop dispatcher (:mod:`llmload.arrivals`) sends arrival ``i`` at its
``timestamp / speedup``; :meth:`TracePrompts.sample` builds a single entry's request, a
:class:`~llmload.workload.replay_session.ReplaySession` a session's turns.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.workload.distributions import MAX_TOKENS, Fixed
from llmload.workload.profiles import Profile, RequestClass
from llmload.workload.prompts import seeded_words, synthetic_prompt
from llmload.workload.request_types import RequestSample
from llmload.workload.trace_sessions import SessionTurn, check_turn, parse_turn, session_groups

__all__ = [
    "BLOCK_TOKENS",
    "MAX_START_MS",
    "MAX_TIMESTAMP_MS",
    "TRACE_CLASS",
    "Trace",
    "TraceEntry",
    "TracePrompts",
    "generate_trace",
    "load_trace",
    "trace_lines",
    "trace_profile",
]

#: Tokens per ``hash_ids`` block (Mooncake's block size).
BLOCK_TOKENS = 512
#: The request class of every replayed entry.
TRACE_CLASS = "trace"
#: The latest first entry (ms from the trace's start): later, the timestamps are a clock's, not the trace's.
MAX_START_MS = 86_400_000.0  # one day
#: The latest entry (ms from the trace's start): a year of traffic (published traces span hours to weeks).
MAX_TIMESTAMP_MS = 366 * 86_400_000.0


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One request of a trace (``turn``: its place in a session, None for a single request)."""

    timestamp_ms: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...] = ()
    turn: SessionTurn | None = None

    def to_dict(self) -> dict[str, Json]:
        t = self.timestamp_ms
        d: dict[str, Json] = {
            "timestamp": int(t) if t == int(t) else t,
            "input_length": self.input_length,
            "output_length": self.output_length,
        }
        if self.hash_ids:
            d["hash_ids"] = list(self.hash_ids)
        if self.turn is not None:
            d.update(self.turn.to_dict())
        return d


@dataclass(frozen=True, slots=True)
class Trace:
    """The entries of one trace file, in time order; ``arrivals``: the indexes of the single entries and of the
    sessions' first turns (what the dispatcher schedules); ``sessions``: each session's entry indexes in turn order,
    by the index of its first turn."""

    path: Path
    entries: tuple[TraceEntry, ...]
    arrivals: tuple[int, ...] = field(init=False, compare=False, repr=False)
    sessions: dict[int, tuple[int, ...]] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        arrivals, sessions = session_groups([e.turn for e in self.entries])
        object.__setattr__(self, "arrivals", arrivals)
        object.__setattr__(self, "sessions", sessions)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def duration_ms(self) -> float:
        """From the start of the trace (time 0) to its last arrival."""
        return self.entries[-1].timestamp_ms

    def block_reuse(self) -> float:
        """Share of listed blocks whose id appeared in an earlier entry (0 when none are listed)."""
        seen: set[int] = set()
        listed = reused = 0
        for e in self.entries:
            for h in e.hash_ids:
                listed += 1
                reused += h in seen
                seen.add(h)
        return reused / listed if listed else 0.0


def load_trace(path: str | Path, limit: int | None = None, rebase: bool = False) -> Trace:
    """Read and validate a Mooncake-format trace; ``limit`` keeps its first N entries; ``rebase``: times from the
    first entry's (``llmload trace rebase``), which may then be anywhere.

    Raises :class:`~llmload.errors.ProfileError` (one line: file, line, field, how to fix).
    """
    path = Path(path)
    where = f"trace '{path}'"
    if limit is not None and limit < 1:
        raise ProfileError(f"{where}: the entry limit must be ≥ 1, got {limit}")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ProfileError(f"{where}: no such file; check the path") from None
    except OSError as e:
        raise ProfileError(f"{where}: cannot read it ({e.strerror or e})") from None
    entries: list[TraceEntry] = []
    previous = 0.0
    base: float | None = None  # rebase: the first entry's timestamp
    turns: dict[str, tuple[SessionTurn, SessionTurn]] = {}  # a session's first turn and its last so far
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        entry = _entry(line, f"{where}: line {n}")
        if base is None:
            base = entry.timestamp_ms if rebase else 0.0
            previous = base
        if entry.timestamp_ms < previous:
            raise ProfileError(
                f"{where}: line {n}: timestamp {entry.timestamp_ms:g} is before the previous entry's {previous:g}; "
                "sort the trace by timestamp"
            )
        previous = entry.timestamp_ms
        if base:
            entry = replace(entry, timestamp_ms=entry.timestamp_ms - base)
        _check_time(entry.timestamp_ms, not entries, path, f"{where}: line {n}")
        if (t := entry.turn) is not None:
            first, last = turns.get(t.session, (None, None))
            check_turn(t, last, first, f"{where}: line {n}")
            turns[t.session] = (first or t, t)
        entries.append(entry)
        if limit is not None and len(entries) == limit:
            break
    if not entries:
        raise ProfileError(
            f"{where}: no entries; write one JSON object per line with timestamp, input_length, output_length"
        )
    return Trace(path, tuple(entries))


def _check_time(t: float, first: bool, path: Path, where: str) -> None:
    """A timestamp a replay can wait for: the first within :data:`MAX_START_MS`, any within :data:`MAX_TIMESTAMP_MS`."""
    d = t / 86_400_000.0
    days = f"{d:,.0f}" if d < 1e6 else f"{d:.3g}"
    if first and t > MAX_START_MS:
        raise ProfileError(
            f"{where}: the first entry's timestamp {t:.15g} would be sent {days} days after the start: timestamps "
            "are milliseconds from the start of the trace, and this looks like a clock time (Unix epoch?); make them "
            f"relative to the first entry with: llmload trace rebase {path} -o rebased.jsonl"
        )
    if t > MAX_TIMESTAMP_MS:
        raise ProfileError(
            f"{where}: timestamp {t:g} would be sent {days} days after the start, more than a replay runs "
            f"({MAX_TIMESTAMP_MS / 86_400_000.0:.0f} days at most): timestamps are milliseconds from the start of "
            "the trace; check this entry and the unit"
        )


def trace_profile(trace: Trace) -> Profile:
    """The profile of a replay: one class :data:`TRACE_CLASS` with the trace's mean lengths, named after the file."""
    n = len(trace)
    mean_in = sum(e.input_length for e in trace.entries) / n
    mean_out = sum(e.output_length for e in trace.entries) / n
    about = (f"replay of {trace.path.name}: {n} entries over {trace.duration_ms / 1000:.1f} s, "
             f"{trace.block_reuse():.0%} of hash_ids blocks reused")  # fmt: skip
    if trace.sessions:
        about += f", {len(trace.sessions)} sessions"
    cls = RequestClass(TRACE_CLASS, 1.0, Fixed(max(1, round(mean_in))), Fixed(max(1, round(mean_out))), description=about)
    return Profile(f"trace:{trace.path.stem}", about, (cls,), source=str(trace.path))


def _entry(line: bytes, where: str) -> TraceEntry:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise ProfileError(f"{where}: not valid JSON ({e}); write one JSON object per line") from None
    if not isinstance(obj, dict):
        raise ProfileError(
            f"{where}: expected a JSON object with timestamp, input_length, output_length, got {_short(obj)}"
        )
    for key in ("timestamp", "input_length", "output_length"):
        if key not in obj:
            raise ProfileError(
                f"{where}: missing {key!r}; every entry needs timestamp (ms), input_length, output_length"
            )
    t = obj["timestamp"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
        raise ProfileError(f"{where}: timestamp must be a number of milliseconds ≥ 0, got {t!r}")
    input_length, output_length = _length(obj, "input_length", where), _length(obj, "output_length", where)
    return TraceEntry(float(t), input_length, output_length, _hash_ids(obj, input_length, where), parse_turn(obj, where))


def _length(obj: dict[str, Json], key: str, where: str) -> int:
    """``input_length`` or ``output_length``: tokens, at least 1, at most :data:`MAX_TOKENS`."""
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ProfileError(f"{where}: {key} must be an int ≥ 1 (tokens), got {v!r}")
    if v > MAX_TOKENS:
        raise ProfileError(f"{where}: {key} {v} is more than any model's context ({MAX_TOKENS:,} tokens at most)")
    return v


def _hash_ids(obj: dict[str, Json], input_length: int, where: str) -> tuple[int, ...]:
    """The entry's prompt block ids (ints >= 0), no more than its input fills blocks."""
    ids = obj.get("hash_ids", [])
    if not isinstance(ids, list):
        raise ProfileError(f"{where}: hash_ids must be a list of block ids (ints ≥ 0), got {_short(ids)}")
    for i, h in enumerate(ids):
        if isinstance(h, bool) or not isinstance(h, int) or h < 0:
            raise ProfileError(f"{where}: hash_ids[{i}] must be an int ≥ 0, got {h!r}")
    most = -(-input_length // BLOCK_TOKENS)
    if len(ids) > most:
        raise ProfileError(
            f"{where}: {len(ids)} hash_ids for input_length {input_length}, which fills at most {most} blocks of "
            f"{BLOCK_TOKENS} tokens; drop the extra ids or fix input_length"
        )
    return tuple(ids)


def _short(value: Any, limit: int = 60) -> str:
    s = repr(value)
    return s if len(s) <= limit else s[: limit - 3] + "..."


@functools.lru_cache(maxsize=4096)  # ~3 KB a block: at most ~12 MB per process
def _block(seed: int, block_id: int) -> str:
    return seeded_words(f"llmload-trace-block:{seed}:{block_id}", BLOCK_TOKENS)


class TracePrompts:
    """Prompts for trace entries: equal block ids give identical words (see the module docstring)."""

    __slots__ = ("class_name", "seed")

    def __init__(self, seed: int, class_name: str = TRACE_CLASS) -> None:
        self.seed = seed
        self.class_name = class_name

    def prompt(self, entry: TraceEntry, rng: random.Random) -> str:
        """``entry.input_length`` words: its blocks' words, then unique words for the rest."""
        parts: list[str] = []
        left = entry.input_length
        for h in entry.hash_ids:
            text = _block(self.seed, h)
            if left < BLOCK_TOKENS:
                text = text[: _end_of_word(text, left)]
            parts.append(text)
            left -= min(left, BLOCK_TOKENS)
        if left:
            parts.append(" " + synthetic_prompt(rng, left))
        return "".join(parts)[1:]

    def sample(self, entry: TraceEntry, rng: random.Random, max_tokens_cap: int | None = None) -> RequestSample:
        """The request to send for ``entry`` (``max_tokens`` = its output length, at most ``max_tokens_cap``)."""
        out = entry.output_length if max_tokens_cap is None else min(entry.output_length, max_tokens_cap)
        return RequestSample(self.class_name, self.prompt(entry, rng), entry.input_length, out)


def _end_of_word(text: str, n: int) -> int:
    """Index just past the ``n``-th word of ``text`` (" w0 w1 ..."), ``n`` ≥ 1."""
    at = 0
    for _ in range(n):
        at = text.find(" ", at + 1)
        if at < 0:
            return len(text)
    return at


def generate_trace(
    entries: int = 200,
    seed: int = 0,
    *,
    rate_per_s: float = 2.0,
    system_prompts: int = 4,
    followup_share: float = 0.35,
    max_blocks: int = 6,
) -> list[TraceEntry]:
    """A synthetic Mooncake-format trace of a chat service (deterministic given ``seed``).

    Arrivals are Poisson at ``rate_per_s``. A new conversation opens with one of
    ``system_prompts`` shared prompts of 1 or 2 blocks (Zipf popularity, s = 1.1), then up
    to one new full block and a partial one (64–511 tokens). With probability
    ``followup_share`` a request instead continues one of the last 8 requests: that
    request's full blocks, then a new full block or not, then a new partial block, as a next
    turn re-sends the conversation (at most ``max_blocks`` blocks; beyond, a new
    conversation starts). Output lengths are log-normal around 120 tokens (16–512).
    """
    if entries < 1 or rate_per_s <= 0 or system_prompts < 1 or not 0 <= followup_share <= 1 or max_blocks < 3:
        raise ValueError(
            "generate_trace: need entries ≥ 1, rate_per_s > 0, system_prompts ≥ 1, 0 ≤ followup_share ≤ 1, max_blocks ≥ 3"
        )
    rng = random.Random(seed)
    next_id = 0
    systems: list[list[int]] = []
    for _ in range(system_prompts):
        size = rng.choice((1, 2))
        systems.append(list(range(next_id, next_id + size)))
        next_id += size
    weights = [k**-1.1 for k in range(1, system_prompts + 1)]
    recent: list[TraceEntry] = []
    out: list[TraceEntry] = []
    t = 0.0
    for _ in range(entries):
        base: list[int] | None = None
        if recent and rng.random() < followup_share:
            prev = rng.choice(recent)
            full = list(prev.hash_ids[: prev.input_length // BLOCK_TOKENS])
            if len(full) + 2 <= max_blocks:
                base = full
        if base is None:
            base = list(rng.choices(systems, weights)[0])
        new = rng.choice((0, 1)) + 1  # a new full block or not, then a new partial one
        blocks = base + list(range(next_id, next_id + new))
        next_id += new
        partial = rng.randint(64, BLOCK_TOKENS - 1)
        length = BLOCK_TOKENS * (len(blocks) - 1) + partial
        output = min(512, max(16, round(rng.lognormvariate(math.log(120), 0.6))))
        entry = TraceEntry(float(round(t)), length, output, tuple(blocks))
        out.append(entry)
        recent = (recent + [entry])[-8:]
        t += rng.expovariate(rate_per_s) * 1000.0
    return out


def trace_lines(entries: list[TraceEntry]) -> bytes:
    """The JSON Lines text of ``entries`` (what :func:`load_trace` reads back)."""
    return b"".join(orjson.dumps(e.to_dict()) + b"\n" for e in entries)
