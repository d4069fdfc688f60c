"""Published traces (BurstGPT, Azure) converted to the Mooncake format ``--trace`` replays."""

from __future__ import annotations

import pytest

from llmload.errors import ProfileError
from llmload.workload.trace_formats import convert_file, convert_rows
from llmload.workload.traces import TraceEntry

BURSTGPT = (
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
    "5.0,ChatGPT,472,18,490,Conversation log\n"
    "10.5,GPT-4,1087,0,1087,Conversation log\n"  # a failed request: 0 response tokens
    "7.25,GPT-4,300,200,500,API log\n"  # out of order: sorted
)
AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.5237070,396,109\n"


def write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_burstgpt_times_become_ms_from_the_first_request_and_failed_rows_are_skipped(tmp_path):
    c = convert_file(write(tmp_path, BURSTGPT), "burstgpt")
    assert c.entries == [TraceEntry(0.0, 472, 18), TraceEntry(2250.0, 300, 200)] and c.skipped == 1
    gpt4 = convert_file(write(tmp_path, BURSTGPT), "burstgpt", model="GPT-4")
    assert gpt4.entries == [TraceEntry(0.0, 300, 200)] and gpt4.skipped == 2
    assert len(convert_file(write(tmp_path, BURSTGPT), "burstgpt", limit=1).entries) == 1


def test_azure_datetimes_keep_their_seven_fraction_digits(tmp_path):
    c = convert_file(write(tmp_path, AZURE), "azure")
    assert [e.input_length for e in c.entries] == [374, 396] and [e.output_length for e in c.entries] == [44, 109]
    assert c.entries[1].timestamp_ms == pytest.approx(3843.117, abs=1e-3)


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        (BURSTGPT, "azure", r"no column 'TIMESTAMP' \(--from azure reads the columns 'TIMESTAMP'"),
        ("Timestamp,Request tokens,Response tokens\nsoon,5,5\n", "burstgpt", r"row 2: Timestamp 'soon' is not a valid"),
        ("Timestamp,Request tokens,Response tokens\n1,5,x\n", "burstgpt", r"row 2: Response tokens 'x' is not a valid"),
        ("Timestamp,Request tokens,Response tokens\n1,5,0\n", "burstgpt", r"no request to convert \(1 rows skipped"),
        ("Timestamp,Request tokens,Response tokens\n1,-5,3\n", "burstgpt", r"row 2: token counts must be >= 0"),
    ],
)
def test_bad_rows_are_one_line_naming_file_row_and_column(tmp_path, text, fmt, message):
    with pytest.raises(ProfileError, match=r"^trace '.*t.csv': " + message):
        convert_file(write(tmp_path, text), fmt)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(ProfileError, match="no such file; check the path"):
        convert_file(tmp_path / "none.csv", "burstgpt")
    with pytest.raises(ProfileError, match="unknown trace format 'sharegpt'"):
        convert_rows([], "sharegpt", "x")
