from __future__ import annotations

import pytest

from llmload.adapters.base import DONE
from llmload.adapters.typed_events import decode_typed_event
from llmload.errors import MalformedChunk, ServerErrorEvent

KINDS = {"delta": 1, "stop": 2, "error": 9}


def test_named_events_are_looked_up_by_name_and_unknown_ones_are_not_parsed():
    assert decode_typed_event(b'{"type": "delta", "x": 1}', "delta", KINDS, 9) == (1, {"type": "delta", "x": 1})
    assert decode_typed_event(b"not json at all", "ping", KINDS, 9) == (0, None)
    with pytest.raises(ServerErrorEvent, match="overloaded"):
        decode_typed_event(b'{"error": {"message": "overloaded"}}', "error", KINDS, 9)
    with pytest.raises(MalformedChunk, match="not a JSON object"):
        decode_typed_event(b"null", "delta", KINDS, 9)  # never mistaken for a count
    with pytest.raises(MalformedChunk, match="not JSON"):
        decode_typed_event(b"{cut", "delta", KINDS, 9)


def test_unnamed_events_carry_their_type_in_the_json():
    assert decode_typed_event(b' {"type": "stop"} ', "", KINDS, 9) == (2, {"type": "stop"})
    assert decode_typed_event(b"[DONE]", "", KINDS, 9) == (DONE, None)
    assert decode_typed_event(b"  ", "", KINDS, 9) == (0, None)
    assert decode_typed_event(b'{"type": "lifecycle"}', "", KINDS, 9) == (0, None)
    with pytest.raises(ServerErrorEvent, match="boom"):
        decode_typed_event(b'{"type": "lifecycle", "error": {"message": "boom"}}', "", KINDS, 9)
    with pytest.raises(ServerErrorEvent, match="bad"):
        decode_typed_event(b'{"type": "error", "error": {"message": "bad"}}', "", KINDS, 9)
    with pytest.raises(MalformedChunk, match="not a JSON object"):
        decode_typed_event(b"[1, 2]", "", KINDS, 9)
