"""A run's ``--records-jsonl`` as a trace: ``llmload trace from-records``.

Every record becomes one entry (warm-up requests too: they were traffic), at the time its request
was meant to be sent (``start_wall_ns``, less the client wait of an open-loop request), in
milliseconds from the first one; ``input_length`` is the prompt's tokens (the server's count when
it stated one), ``output_length`` the ``max_tokens`` asked (the tokens received when none was).
No ``hash_ids``: the records do not say which prompts shared blocks.

A record with a ``session`` (a conversation's or agent's turn) becomes that session's turn
(:mod:`llmload.workload.trace_sessions`):

* ``wait_ms``: the tool wait the user recorded (``tool_wait_ms``); else the time from the previous
  turn's end to this turn's start (the think time);
* after a text answer, ``user_tokens`` is what the context grew by beyond the answer
  (``asked_input_tokens`` minus the previous turn's and its ``output_tokens``: the new user
  message); after tool calls, ``tool_results`` (each result's tokens, as the record says; a
  record without them: the growth split evenly between the calls);
* ``tool_calls`` from the record's ``tool_names``; ``tools`` and ``parallel_tool_calls`` from
  the session's first turn.

A session is kept from its turn 1 up to its first missing turn (the rest is counted as
skipped); the same turn twice means records of two runs in one file (``--records-jsonl``
appends): one error line says so. Bad input is one :class:`~llmload.errors.ProfileError` line
naming the file, the line and the key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import orjson

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.workload.distributions import MAX_TOKENS
from llmload.workload.trace_sessions import SessionTurn
from llmload.workload.traces import TraceEntry

__all__ = ["FromRecords", "read_records", "records_to_trace"]


class _Record(TypedDict):
    """What the conversion reads of a record (:mod:`llmload.metrics.dump`), checked on reading."""

    where: str
    class_name: str
    at_ns: int  # wall time it was meant to be sent
    start_wall_ns: int
    end_ns: int  # relative to its start
    input_tokens: int
    asked: int
    output_tokens: int
    max_tokens: int | None
    session: str
    turn: int
    doc: Mapping[str, Json]


@dataclass(frozen=True, slots=True)
class FromRecords:
    """The trace's entries (in time order), its sessions and single requests, and the records left out."""

    entries: list[TraceEntry]
    sessions: int
    singles: int
    skipped: int  # records of another class (``classes``) or of a session after its first missing turn


def read_records(paths: Iterable[Path]) -> list[_Record]:
    """Every record line of ``paths`` (one line per request, as ``--records-jsonl`` writes them)."""
    out: list[_Record] = []
    for path in paths:
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise ProfileError(f"records '{path}': cannot read it ({e.strerror or e}); pass a --records-jsonl file") from None
        for n, line in enumerate(raw.splitlines(), 1):
            if line.strip():
                out.append(_record(line, f"records '{path}': line {n}"))
    return out


def _record(line: bytes, where: str) -> _Record:
    try:
        d = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise ProfileError(f"{where}: not JSON ({e}); pass a file written by --records-jsonl") from None
    if not isinstance(d, dict):
        raise ProfileError(f"{where}: not a request record (a JSON object); pass a file written by --records-jsonl")

    def num(key: str, default: int | None = None) -> int:
        v = d.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ProfileError(f"{where}: {key} must be an int, got {v!r}; is it a file written by --records-jsonl?")
        return v

    start, intended = num("start_wall_ns"), d.get("intended_ns") or 0
    max_tokens = d.get("max_tokens")
    return _Record(where=where, class_name=str(d.get("class", "")), at_ns=start + (intended if isinstance(intended, int) else 0),
                   start_wall_ns=start, end_ns=num("end_ns"), input_tokens=num("input_tokens"),
                   asked=num("asked_input_tokens", num("input_tokens")), output_tokens=num("output_tokens", 0),
                   max_tokens=max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None,
                   session=str(d.get("session") or ""), turn=num("turn", 0), doc=d)  # fmt: skip


def records_to_trace(records: list[_Record], classes: Iterable[str] = ()) -> FromRecords:
    """The trace of ``records`` (see the module docstring); ``classes``: keep only these (all when empty)."""
    keep = set(classes)
    kept = [r for r in records if not keep or r["class_name"] in keep]
    skipped = len(records) - len(kept)
    if not kept:
        raise ProfileError(f"no request records to convert{' of class ' + ', '.join(sorted(keep)) if keep else ''}; "
                           "pass the files a run wrote with --records-jsonl")  # fmt: skip
    t0 = min(r["at_ns"] for r in kept)
    rows: list[tuple[int, int, TraceEntry]] = []  # (time, order, entry)
    by_session: dict[str, dict[int, _Record]] = {}
    for r in kept:
        if not r["session"] or r["turn"] < 1:
            rows.append((r["at_ns"], len(rows), _entry(r, t0, None)))
            continue
        turns = by_session.setdefault(r["session"], {})
        if r["turn"] in turns:
            raise ProfileError(f"{r['where']}: session {r['session']!r} turn {r['turn']} appears twice (also "
                               f"{turns[r['turn']]['where']}): records of two runs in one file? --records-jsonl "
                               "appends; pass one run's records")  # fmt: skip
        turns[r["turn"]] = r
    singles, sessions = len(rows), 0
    for turns in by_session.values():
        k = 1
        while k in turns:
            k += 1
        skipped += len(turns) - (k - 1)
        if k == 1:  # no turn 1: not a session this trace can replay
            continue
        sessions += 1
        previous: tuple[_Record, SessionTurn] | None = None
        for n in range(1, k):
            r = turns[n]
            turn = _turn(r, previous, turns[1])
            rows.append((r["at_ns"], len(rows), _entry(r, t0, turn)))
            previous = (r, turn)
    rows.sort(key=lambda row: (row[0], row[1]))  # a session's turns stay in order: each starts after the last ended
    return FromRecords([e for _, _, e in rows], sessions, singles, skipped)


def _entry(r: _Record, t0: int, turn: SessionTurn | None) -> TraceEntry:
    out = r["max_tokens"] if r["max_tokens"] is not None else r["output_tokens"]
    clamp = lambda n: min(max(n, 1), MAX_TOKENS)  # noqa: E731
    return TraceEntry(round((r["at_ns"] - t0) / 1e6, 3), clamp(r["input_tokens"]), clamp(out), (), turn)


def _turn(r: _Record, previous: tuple[_Record, SessionTurn] | None, first: _Record) -> SessionTurn:
    d = r["doc"]
    names = d.get("tool_names")
    calls = tuple(str(c) for c in names) if isinstance(names, list) else ()
    if calls and not first["doc"].get("tools"):  # tool calls without the definitions: not replayable as such
        raise ProfileError(f"{first['where']}: session {r['session']!r} made tool calls but its first turn's record "
                           "has no tools (the definitions it sent); pass the records of the whole run")  # fmt: skip
    if previous is None:
        tools = d.get("tools")
        return SessionTurn(r["session"], 1, 0.0, max(r["asked"], 1), (), calls,
                           tuple(t for t in tools if isinstance(t, dict)) if isinstance(tools, list) else (),
                           d.get("parallel_tool_calls") is True)  # fmt: skip
    p, pt = previous
    tool_wait = d.get("tool_wait_ms")
    if isinstance(tool_wait, (int, float)) and tool_wait > 0:
        wait = float(tool_wait)
    else:
        wait = max((r["start_wall_ns"] - p["start_wall_ns"] - p["end_ns"]) / 1e6, 0.0)
    grew = r["asked"] - p["asked"] - p["output_tokens"]  # the context beyond the previous answer
    if not pt.tool_calls:
        return SessionTurn(r["session"], r["turn"], wait, max(grew, 1), (), calls)
    sizes = d.get("tool_results")
    if not (isinstance(sizes, list) and len(sizes) == len(pt.tool_calls) and all(isinstance(s, int) and s >= 1 for s in sizes)):
        each = max(grew // len(pt.tool_calls), 1)
        sizes = [each] * len(pt.tool_calls)
    return SessionTurn(r["session"], r["turn"], wait, 0, tuple(sizes), calls)  # type: ignore[arg-type]
