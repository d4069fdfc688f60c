"""``llmload trace info | generate | convert | rebase | from-records``."""

from __future__ import annotations

from pathlib import Path

from llmload.cli import main as cli_main
from llmload.workload.traces import generate_trace, load_trace

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "traces" / "mooncake-example.jsonl"


def test_generate_with_the_defaults_writes_the_shipped_example_and_describes_it(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert cli_main(["trace", "generate", "-o", str(out)]) == 0
    assert out.read_bytes() == EXAMPLE.read_bytes()
    said = capsys.readouterr().out
    assert f"{out}: 200 requests over" in said and "hash_ids: on 200 of 200 entries" in said
    assert cli_main(["trace", "generate", "-o", str(out), "--entries", "30", "--seed", "2"]) == 0
    assert load_trace(out).entries == tuple(generate_trace(30, 2))


def test_convert_then_info_and_errors_are_one_line_with_exit_2(tmp_path, capsys):
    src = tmp_path / "b.csv"
    src.write_text("Timestamp,Model,Request tokens,Response tokens\n0.5,GPT-4,10,0\n1.0,GPT-4,100,20\n3.0,GPT-4,200,40\n")
    out = tmp_path / "b.jsonl"
    assert cli_main(["trace", "convert", "--from", "burstgpt", str(src), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "converted 2 requests (1 rows skipped" in said and "2 requests over 2.0 s (1 req/s" in said
    assert [e.timestamp_ms for e in load_trace(out).entries] == [0.0, 2000.0]
    assert cli_main(["trace", "info", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("llmload trace: error: trace '") and "no such file" in err[0]
    assert cli_main(["trace", "generate", "-o", str(out), "--rate", "0"]) == 2
    assert cli_main(["trace", "convert", "--from", "burstgpt", str(src), "-o", str(out), "--limit", "0"]) == 2


def test_generate_names_the_flag_that_is_wrong(tmp_path, capsys):
    """Was the generator's own words ("generate_trace: need entries ≥ 1, rate_per_s > 0, ...") or, for nan,
    "cannot convert float NaN to integer"."""
    out = str(tmp_path / "g.jsonl")
    for flag, value, message in (("--entries", "0", "--entries 0: must be >= 1"),
                                 ("--rate", "nan", "--rate nan: must be a number > 0"),
                                 ("--rate", "-2", "--rate -2: must be a number > 0"),
                                 ("--system-prompts", "0", "--system-prompts 0: must be >= 1"),
                                 ("--followup-share", "1.5", "--followup-share 1.5: must be a share in [0, 1]")):  # fmt: skip
        assert cli_main(["trace", "generate", "-o", out, flag, value]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"llmload trace: error: {message}") and err.count("\n") == 1, err


def test_rebase_makes_clock_times_relative_to_the_first_entry(tmp_path, capsys):
    """A trace of clock times (Unix epoch ms) is refused by --trace with a pointer to this command, which fixes it."""
    src = tmp_path / "clock.jsonl"
    src.write_text('{"timestamp": 1733097600123, "input_length": 5, "output_length": 3, "hash_ids": [7]}\n'
                   '{"timestamp": 1733097601623.5, "input_length": 9, "output_length": 2}\n')  # fmt: skip
    assert cli_main(["trace", "info", str(src)]) == 2
    assert f"llmload trace rebase {src} -o rebased.jsonl" in capsys.readouterr().err
    out = tmp_path / "t.jsonl"
    assert cli_main(["trace", "rebase", str(src), "-o", str(out)]) == 0
    assert "2 requests over 1.5 s" in capsys.readouterr().out
    entries = load_trace(out).entries
    assert [e.timestamp_ms for e in entries] == [0.0, 1500.5] and entries[0].hash_ids == (7,)


def test_from_records_writes_a_replayable_trace_and_says_what_it_holds(tmp_path, capsys):
    from tests.unit.workload.test_trace_records import agent_run

    records = tmp_path / "records.jsonl"
    records.write_bytes(b"".join(agent_run()))
    out = tmp_path / "t.jsonl"
    assert cli_main(["trace", "from-records", str(records), "-o", str(out), "--class", "agent"]) == 0
    said = capsys.readouterr().out
    assert "3 requests: 1 sessions (3 turns), 0 single requests; 1 records left out" in said
    assert "sessions: 1 (3 turns, 1 of them sending tool results); a replay sends each session's turns in order" in said
    assert load_trace(out).sessions == {0: (0, 1, 2)}
    assert cli_main(["trace", "from-records", str(tmp_path / "none.jsonl"), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("llmload trace: error: records '") and "cannot read it" in err[0]
