"""A run read back for fitting: each record's timing, lengths, prefix-cache hit and who sent it."""

from __future__ import annotations

import json

import orjson

from llmload.capacity.chains import chains
from llmload.capacity.drive import drive
from llmload.capacity.measured import load_measured
from llmload.capacity.predict import to_record
from llmload.metrics.dump import record_to_line
from llmload.sim.params import EngineParams
from tests.helpers.capacity import ladder


def _line(start_s: float, **extra) -> bytes:
    doc = {"class": "c", "outcome": "ok", "start_wall_ns": int((1000 + start_s) * 1e9), "chunks_ns": [100_000_000,
           200_000_000], "end_ns": 200_000_000, "input_tokens": 300, "output_tokens": 2, **extra}  # fmt: skip
    return orjson.dumps(doc) + b"\n"


def _write(tmp_path, lines: list[bytes]):
    (tmp_path / "records.jsonl").write_bytes(b"".join(lines))
    (tmp_path / "summary.json").write_text(json.dumps({"users_max": 2}))
    return load_measured(tmp_path)


def test_records_give_their_user_conversation_turn_and_cache_hit_and_old_ones_read_as_unknown(tmp_path):
    lines = [_line(i, user=1009, session="1009.1", turn=i + 1, cached_prompt_tokens=16 * i) for i in range(8)]
    lines.append(_line(9.0))  # a line written before these fields
    m = _write(tmp_path, lines)
    r = m.reqs[2]
    assert (r.user, r.session, r.turn, r.cached, r.prefill) == ("1009", "1009.1", 3, 32, 268)
    old = m.reqs[-1]
    assert (old.user, old.session, old.turn, old.cached, old.prefill) == ("", "", 0, None, 300)


def test_a_run_s_records_link_each_request_to_its_user_s_previous_one(tmp_path):
    sent = drive(EngineParams(max_num_seqs=4), ladder((1, 3), step_s=20.0, warmup_s=2.0))
    m = _write(tmp_path, [record_to_line(to_record(s, False, 40.0)) for s in sent])
    prev = chains(m.reqs)
    assert sum(p is not None for p in prev) == len(m.reqs) - 3  # every request but each of the 3 users' first
    assert all(m.reqs[p].user == r.user for r, p in zip(m.reqs, prev, strict=True) if p is not None)
