"""The adapter conformance kit: replay recorded stream transcripts through an adapter.

A fixtures directory holds transcripts, each with a sidecar ``<name>.expect.json``. The
extension says how the body is framed:

* ``.sse`` -- ``text/event-stream``, fed line by line to an SSE parser;
* ``.ndjson`` -- one JSON document per line;
* ``.txt`` -- raw text: each line of the file is one read (line ending removed; an empty
  line is an empty read).

The sidecar gives the expected outcome (extra keys ``source`` and ``note`` are free text)::

    {"content_events": 6, "tokens_sum": 6, "finish_reason": "length",
     "usage_prompt_tokens": 24, "usage_completion_tokens": 6,
     "error": null | "server_error" | "malformed_chunk", "done": true,
     "text_chars": 21,                                  # optional from here on
     "reasoning_events": 4, "first_output_event": 4, "usage_reasoning_tokens": 4}

``server_timing`` (optional) is the server's per-request timing the adapter read:
``null``, or ``{"format": "vllm" | "llamacpp", "queue_ms", "prefill_ms", "decode_ms"}``
(:mod:`llmload.adapters.server_timing`).
``reasoning_events`` / ``first_output_event`` are the channels the adapter noted
(``StreamState.reasoning_chunks`` / ``first_output_chunk``: -1 when it noted no output
event), ``usage_reasoning_tokens`` the reasoning count from usage (``null`` if none).

Replay stops, like the stream loop, at ``DONE`` or at the first exception. Typical use in
an adapter package's tests::

    from llmload.testing import assert_adapter_conforms
    assert_adapter_conforms(MyAdapter(AdapterConfig(model="m")), Path(__file__).parent / "streams")
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from llmload.adapters.base import DONE, Adapter, RequestSpec, StreamState
from llmload.adapters.framing import NdjsonParser, SseParser, iter_sseclient_events
from llmload.errors import StreamError
from llmload.jsonvalue import Json
from llmload.workload.request_types import RequestSample

__all__ = [
    "TRANSCRIPT_SUFFIXES",
    "TranscriptOutcome",
    "assert_adapter_conforms",
    "check_build_request",
    "iter_transcript_events",
    "run_transcript",
]

#: Transcript file extensions the kit understands.
TRANSCRIPT_SUFFIXES = (".sse", ".ndjson", ".txt")
_REQUIRED_KEYS = (
    "content_events",
    "tokens_sum",
    "finish_reason",
    "usage_prompt_tokens",
    "usage_completion_tokens",
    "error",
    "done",
)
_OPTIONAL_KEYS = ("text_chars", "reasoning_events", "first_output_event", "usage_reasoning_tokens", "server_timing")
_FREE_TEXT_KEYS = ("source", "note")
_MAX_TOKEN_KEYS = (
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "max_new_tokens",
    "n_predict",
    "num_predict",
)


@dataclass(slots=True)
class TranscriptOutcome:
    """What replaying one transcript through an adapter produced."""

    content_events: int = 0
    tokens_sum: int = 0
    finish_reason: str | None = None
    usage_prompt_tokens: int | None = None
    usage_completion_tokens: int | None = None
    error: str | None = None
    done: bool = False
    text_chars: int = 0
    reasoning_events: int = 0
    first_output_event: int = -1
    usage_reasoning_tokens: int | None = None
    server_timing: dict[str, Json] | None = None
    error_message: str | None = None

    def mismatches(self, expect: dict[str, Json]) -> list[str]:
        """``key: expected X, got Y`` for every expected key this outcome does not match."""
        got = asdict(self)
        keys = [*_REQUIRED_KEYS, *(k for k in _OPTIONAL_KEYS if k in expect)]
        out = [f"{k}: expected {expect[k]!r}, got {got[k]!r}" for k in keys if expect[k] != got[k]]
        if self.error_message and expect["error"] != self.error:
            out.append(f"(error message: {self.error_message})")
        return out


def iter_transcript_events(path: Path, *, sse_parser: str = "fast") -> Iterator[tuple[str, bytes]]:
    """``(event_name, data)`` of a transcript, framed according to its extension."""
    raw = Path(path).read_bytes()
    suffix = Path(path).suffix
    if suffix == ".sse":
        lines = raw.splitlines(keepends=True)
        if sse_parser == "sseclient":
            yield from iter_sseclient_events(lines)
            return
        if sse_parser != "fast":
            raise ValueError(f"sse_parser must be 'fast' or 'sseclient', not {sse_parser!r}")
        parser = SseParser()
        for line in lines:
            event = parser.feed_line(line)
            if event is not None:
                yield event
        event = parser.flush()
        if event is not None:
            yield event
    elif suffix == ".ndjson":
        ndjson = NdjsonParser()
        for line in raw.splitlines(keepends=True):
            doc = ndjson.feed_line(line)
            if doc is not None:
                yield "", doc
    elif suffix == ".txt":
        for line in raw.splitlines():
            yield "", line
    else:
        raise ValueError(f"{path}: unknown transcript extension {suffix!r}; expected one of {TRANSCRIPT_SUFFIXES}")


def run_transcript(adapter: Adapter, path: Path, *, sse_parser: str = "fast") -> TranscriptOutcome:
    """Replay one transcript through ``adapter.feed``, as the stream loop would."""
    state = StreamState()
    out = TranscriptOutcome()
    try:
        for event, data in iter_transcript_events(path, sse_parser=sse_parser):
            n = adapter.feed(state, data, event)
            if type(n) is not int or n < DONE:
                raise TypeError(f"feed returned {n!r}; expected an int >= {DONE}")
            if n == DONE:
                out.done = True
                break
            if n > 0:
                out.content_events += 1
                out.tokens_sum += n
    except StreamError as exc:
        out.error = exc.kind
        out.error_message = str(exc)
    except Exception as exc:  # reported as a mismatch, not raised: the kit lists every problem
        out.error = f"unexpected {type(exc).__name__}"
        out.error_message = str(exc)
    out.finish_reason = state.finish_reason
    out.usage_prompt_tokens = state.usage_prompt_tokens
    out.usage_completion_tokens = state.usage_completion_tokens
    out.text_chars = state.text_chars
    out.reasoning_events = state.reasoning_chunks
    out.first_output_event = state.first_output_chunk
    out.usage_reasoning_tokens = state.usage_reasoning_tokens
    if state.server_timing is not None:
        out.server_timing = {
            "format": state.server_timing,
            "queue_ms": state.server_queue_ms,
            "prefill_ms": state.server_prefill_ms,
            "decode_ms": state.server_decode_ms,
        }
    return out


def check_build_request(adapter: Adapter, max_tokens: int = 17) -> list[str]:
    """Problems with ``adapter.build_request`` (empty when it conforms)."""
    sample = RequestSample(class_name="conformance", prompt="Say hello.", input_tokens=3, max_tokens=max_tokens)
    spec = adapter.build_request(sample)
    if not isinstance(spec, RequestSpec):
        return [f"build_request returned {type(spec).__name__}, not RequestSpec"]
    problems = []
    if not spec.path.startswith("/"):
        problems.append(f"path {spec.path!r} does not start with '/'")
    if spec.max_tokens != max_tokens:
        problems.append(f"RequestSpec.max_tokens is {spec.max_tokens}, asked {max_tokens}")
    try:
        body = orjson.loads(spec.body)
    except orjson.JSONDecodeError as exc:
        return [*problems, f"body is not valid JSON: {exc}"]
    if not isinstance(body, dict):
        return [*problems, "body is not a JSON object"]
    if body.get("stream") is not True:
        problems.append(f"body 'stream' is {body.get('stream')!r}, expected true")
    places = [body, body.get("parameters") or {}, body.get("options") or {}]
    if not any(isinstance(p, dict) and p.get(k) == max_tokens for p in places for k in _MAX_TOKEN_KEYS):
        problems.append(f"no max-tokens field equal to {max_tokens} (looked for {', '.join(_MAX_TOKEN_KEYS)})")
    content_type = {k.lower(): v for k, v in spec.headers.items()}.get("content-type", "")
    if "json" not in content_type:
        problems.append(f"Content-Type header is {content_type!r}, expected a JSON type")
    return problems


def _load_expect(transcript: Path) -> tuple[dict[str, Json] | None, list[str]]:
    sidecar = transcript.with_name(transcript.stem + ".expect.json")
    if not sidecar.exists():
        return None, [f"missing sidecar {sidecar.name}"]
    expect = json.loads(sidecar.read_text(encoding="utf-8"))
    problems = [f"{sidecar.name}: missing key {k!r}" for k in _REQUIRED_KEYS if k not in expect]
    known = {*_REQUIRED_KEYS, *_OPTIONAL_KEYS, *_FREE_TEXT_KEYS}
    problems += [f"{sidecar.name}: unknown key {k!r}" for k in expect if k not in known]
    return (None if problems else expect), problems


def assert_adapter_conforms(
    adapter: Adapter, fixtures_dir: Path | str, *, sse_parser: str = "fast"
) -> dict[str, TranscriptOutcome]:
    """Check ``adapter`` against every transcript in ``fixtures_dir`` and its request builder.

    Raises ``AssertionError`` listing every problem found; returns the outcomes by file
    name when all conform.
    """
    fixtures = Path(fixtures_dir)
    problems: list[str] = []
    for attr in ("name", "default_path", "default_framing"):
        if not hasattr(adapter, attr):
            problems.append(f"adapter has no {attr!r} class attribute")
    problems += [f"build_request: {p}" for p in check_build_request(adapter)]
    transcripts = sorted(p for p in fixtures.iterdir() if p.suffix in TRANSCRIPT_SUFFIXES)
    if not transcripts:
        problems.append(f"no transcripts ({', '.join(TRANSCRIPT_SUFFIXES)}) in {fixtures}")
    outcomes: dict[str, TranscriptOutcome] = {}
    for path in transcripts:
        expect, bad = _load_expect(path)
        problems += [f"{path.name}: {p}" for p in bad]
        if expect is None:
            continue
        outcome = outcomes[path.name] = run_transcript(adapter, path, sse_parser=sse_parser)
        problems += [f"{path.name}: {m}" for m in outcome.mismatches(expect)]
    if problems:
        name = getattr(adapter, "name", type(adapter).__name__)
        raise AssertionError(
            f"adapter {name!r} does not conform ({len(problems)} problems):\n  " + "\n  ".join(problems)
        )
    return outcomes
