"""Per-call cost of the stream hot path: ``Adapter.feed`` per content chunk, parsers per line.

Run: ``.venv/bin/python benchmarks/adapter_parse.py [--number N]``. Prints µs per call
(best of 5 repeats) for a typical content event through each adapter (vLLM-shaped chunks, a
Responses and a Messages delta event, a reasoning chunk), and
µs per line for the fast SSE parser, the sseclient-py reference and the NDJSON parser.
"""

from __future__ import annotations

import argparse
import timeit

from llmload.adapters import AdapterConfig, StreamState, get_adapter_class
from llmload.adapters.framing import NdjsonParser, SseParser, iter_sseclient_events

CHAT_CHUNK = (
    b'{"id":"chatcmpl-b1f0c7d2e3a94c5e8f6a7b8c9d0e1f2a","object":"chat.completion.chunk",'
    b'"created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,'
    b'"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}'
)
COMPLETIONS_CHUNK = (
    b'{"id":"cmpl-4d2e8f0a1b3c4d5e6f7a8b9c0d1e2f3a","object":"text_completion","created":1718000000,'
    b'"model":"meta-llama/Llama-3.1-8B","choices":[{"index":0,"text":" world","logprobs":null,'
    b'"finish_reason":null,"stop_reason":null}]}'
)
CHAT_REASONING_CHUNK = CHAT_CHUNK.replace(b'"content"', b'"reasoning_content"')
RESPONSES_DELTA = (
    b'{"type":"response.output_text.delta","item_id":"msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",'
    b'"output_index":0,"content_index":0,"delta":" world","logprobs":[],"sequence_number":12}'
)
MESSAGES_DELTA = b'{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}}'
TGI_CHUNK = (
    b'{"index":4,"token":{"id":6437,"text":" world","logprob":-0.25,"special":false},'
    b'"generated_text":null,"details":null}'
)
W = 46  # label column width
CASES = [  # (adapter, label, data, SSE event name)
    ("openai-chat", "vLLM chat chunk", CHAT_CHUNK, ""),
    ("openai-chat", "vLLM chat reasoning chunk", CHAT_REASONING_CHUNK, ""),
    ("openai-completions", "vLLM completions chunk", COMPLETIONS_CHUNK, ""),
    ("openai-responses", "output_text.delta event", RESPONSES_DELTA, "response.output_text.delta"),
    ("anthropic-messages", "text_delta event", MESSAGES_DELTA, "content_block_delta"),
    ("stream", "TGI token event", TGI_CHUNK, ""),
    ("stream", "plain-text read", b" world", ""),
]


def per_call_us(func, number: int) -> float:
    """Best-of-5 µs per call of ``func()``, minus the cost of calling an empty function."""
    best = min(timeit.repeat(func, number=number, repeat=5))
    empty = min(timeit.repeat(lambda: None, number=number, repeat=5))
    return (best - empty) / number * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=200_000, help="calls per repeat")
    number = ap.parse_args().number

    print(f"{'adapter.feed':<{W}} {'µs/call':>8}")
    for name, label, chunk, event in CASES:
        adapter = get_adapter_class(name)(AdapterConfig())
        state = StreamState()

        def call(feed=adapter.feed, state=state, chunk=chunk, event=event) -> int:
            return feed(state, chunk, event)

        assert call() == 1, (name, label)
        print(f"{name + ' / ' + label:<{W}} {per_call_us(call, number):8.3f}")

    line, blank = b"data: " + CHAT_CHUNK + b"\n", b"\n"
    parser = SseParser()
    feed_line = parser.feed_line

    def sse_pair() -> None:  # a data line and the blank line that dispatches it
        feed_line(line)
        feed_line(blank)

    print(f"\n{'framing':<{W}} {'µs/line':>8}")
    print(f"{'SseParser (data line + blank line)':<{W}} {per_call_us(sse_pair, number) / 2:8.3f}")
    lines = [line, blank] * 1000
    ref_us = min(timeit.repeat(lambda: sum(1 for _ in iter_sseclient_events(lines)), number=20, repeat=3))
    print(f"{'sseclient-py reference':<{W}} {ref_us / (20 * len(lines)) * 1e6:8.3f}")
    ndjson = NdjsonParser().feed_line
    nd_line = CHAT_CHUNK + b"\n"
    print(f"{'NdjsonParser':<{W}} {per_call_us(lambda: ndjson(nd_line), number):8.3f}")


if __name__ == "__main__":
    main()
