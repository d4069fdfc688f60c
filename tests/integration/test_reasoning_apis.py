"""Reasoning, TTFO and the three streaming APIs, end to end: the real CLI against the simulator.

For each API (chat completions, Responses, Messages), one ``llmload run`` against a
fixed-latency simulator (first token 60 ms after the request, then one every 5 ms) that
streams 20 reasoning tokens before the answer, in that API's own form, and requires an
API key the API's way (``Authorization: Bearer`` / ``x-api-key``; the client takes it
from ``$OPENAI_API_KEY`` / ``$ANTHROPIC_API_KEY``, and finds the model through the same
headers). Class ``reason`` asks for 40 tokens; class ``fails`` for 60, and every request
carries ``"llmload_fail_after": 50`` (``--extra-body``), so the simulator ends each
``fails`` answer after 50 tokens with the API's own mid-stream error event.

Checked on the raw records (``--records-jsonl``), one definition each
(:mod:`llmload.metrics.definitions`): TTFT p50 within 10 % of 60 ms (the first token of
any channel: reasoning), TTFO p50 within 5 % of 60 + 20 x 5 = 160 ms, reasoning tokens
= 20 exactly on every successful request (from usage where the API reports them: chat
and Responses; counted from ``thinking_delta`` events for Messages); every failure is
``server_error``; the summary keeps requests = ok + errors + interrupted; the key is in
no output, summary or record.

Checked on the summary too (built from the merged histograms, not the records): class
``reason``'s ``ttft_ms`` p50 within 10 % of 60 ms, ``ttfo_ms`` p50 within 5 % of 160 ms,
``reasoning_ms`` p50 within 5 % of 100 ms, ``reasoning_tokens`` total = 20 x its successful
requests (mean 20 exactly, every one from usage or every one counted, as the API reports),
no hidden reasoning, no buffered jumps; the console prints the reasoning table.
"""

from __future__ import annotations

import statistics

import pytest

from llmload.metrics.definitions import hidden_reasoning, reasoning_s, ttfo_s, ttft_s
from llmload.metrics.dump import record_from_line
from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration

TTFT_MS, ITL_MS, REASONING = 60, 5, 20
KEY = "sk-llmload-test-9f3c"
PROFILE = """
name = "reasoning"
[[classes]]
name = "reason"
weight = 1
input_tokens = 8
output_tokens = 40
[[classes]]
name = "fails"
weight = 1
input_tokens = 8
output_tokens = 60
"""


@pytest.mark.parametrize(
    ("api", "key_env", "usage_says"),
    [
        ("openai-chat", "OPENAI_API_KEY", True),
        ("openai-responses", "OPENAI_API_KEY", True),
        ("anthropic-messages", "ANTHROPIC_API_KEY", False),
    ],
)
def test_ttft_ttfo_reasoning_tokens_and_error_events(sim, tmp_path, monkeypatch, api, key_env, usage_says):
    url = sim(ttft_ms=TTFT_MS, itl_ms=ITL_MS, reasoning_tokens=REASONING, api_key=KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv(key_env, KEY)  # the child inherits it
    profile, records = tmp_path / "reasoning.toml", tmp_path / "records.jsonl"
    profile.write_text(PROFILE)
    code, output, s = run_cli(
        ["--headless", "-u", "4", "-r", "4", "-t", "5s", "--host", url, "--api", api, "--profile", str(profile),
         "--extra-body", '{"llmload_fail_after": 50}', "--records-jsonl", str(records), "--only-summary",
         "--stop-timeout", "0"],
        tmp_path,
    )  # fmt: skip
    assert code in (0, 1), output[-3000:]  # 1: Locust's exit code when requests failed (they must)
    assert s is not None, output[-3000:]
    o = s["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]
    assert s["errors_by_kind"] == {"server_error": o["errors"]}
    assert s["classes"]["fails"]["ok"] == 0 and s["classes"]["fails"]["errors"] > 3
    assert s["classes"]["reason"]["errors"] == 0 and s["classes"]["reason"]["ok"] > 10

    recs = [record_from_line(line) for line in records.read_bytes().splitlines()]
    ok = [r for r in recs if r.outcome == "ok"]
    failed = [r for r in recs if r.outcome == "error"]
    assert len(ok) == o["ok"] and len(failed) == o["errors"]
    assert {r.error_kind for r in failed} == {"server_error"}
    assert all(r.class_name == "fails" and r.counted_tokens == 50 for r in failed)  # all 50 tokens, then the event
    assert all(r.reasoning_tokens == REASONING for r in ok)
    assert all(r.reasoning_tokens_from_usage is usage_says for r in ok)
    assert all(r.reasoning_chunks == REASONING and r.first_output_chunk == REASONING for r in ok)
    assert not any(hidden_reasoning(r) for r in ok)
    assert all(r.output_tokens == 40 and r.output_tokens_from_usage for r in ok)
    ttft = statistics.median(ttft_s(r) * 1e3 for r in ok)
    ttfo = statistics.median(ttfo_s(r) * 1e3 for r in ok)
    reasoning = statistics.median(reasoning_s(r) * 1e3 for r in ok)
    assert ttft == pytest.approx(TTFT_MS, rel=0.10)
    assert ttfo == pytest.approx(TTFT_MS + REASONING * ITL_MS, rel=0.05)
    assert reasoning == pytest.approx(REASONING * ITL_MS, rel=0.05)
    assert KEY not in output and KEY not in str(s) and KEY.encode() not in records.read_bytes()

    r = s["classes"]["reason"]
    assert r["ttft_ms"]["p50"] == pytest.approx(TTFT_MS, rel=0.10)
    assert r["ttfo_ms"]["p50"] == pytest.approx(TTFT_MS + REASONING * ITL_MS, rel=0.05)
    assert r["reasoning_ms"]["p50"] == pytest.approx(REASONING * ITL_MS, rel=0.05)
    assert r["ttfo_ms"]["count"] == r["reasoning_ms"]["count"] == r["ok"]
    source = "from_usage" if usage_says else "counted"
    assert r["reasoning_tokens"] == {"total": REASONING * r["ok"], "mean": float(REASONING), source: r["ok"],
                                     ("counted" if usage_says else "from_usage"): 0}  # fmt: skip
    assert o["reasoning_tokens"]["total"] == REASONING * o["ok"]  # failed requests' reasoning is not counted
    assert o["hidden_reasoning"] == 0 and o["buffered_token_jumps"] == 0
    assert "TTFO p50" in output and f"reasoning tokens {REASONING * o['ok']} over {o['ok']} requests" in output
