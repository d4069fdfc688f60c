"""The measurement core's acceptance run: the real CLI against the embedded simulator.

A server whose first token comes 50 ms after the request and then one token every 5 ms,
driven by ``llmload run --headless -u 40 -r 40 -t 30s --api openai-chat --profile default``:
TTFT p50 within 10 % of 50 ms, ITL p50 within 5 % of 5 ms, mean TPOT within 3 % of 5 ms,
class shares of requests sent within ±3 points of 30/40/30, requests = ok + errors + interrupted.
"""

from __future__ import annotations

import pytest

from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration


@pytest.mark.slow  # over 20 s
def test_per_token_timing_is_accurate_at_40_streams(sim, tmp_path):
    url = sim(ttft_ms=50, itl_ms=5)
    code, output, s = run_cli(
        ["--headless", "-u", "40", "-r", "40", "-t", "30s", "--host", url, "--api", "openai-chat",
         "--profile", "default", "--only-summary", "--stop-timeout", "0"],
        tmp_path,
    )  # fmt: skip
    assert code == 0, output[-3000:]
    assert s is not None, output[-3000:]
    o = s["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]
    assert o["errors"] == 0, s["errors_by_kind"]
    assert o["ok"] > 200
    assert o["ttft_ms"]["p50"] == pytest.approx(50, rel=0.10)
    assert o["itl_ms"]["p50"] == pytest.approx(5, rel=0.05)
    assert o["tpot_ms"]["mean"] == pytest.approx(5, rel=0.03)
    shares = {name: c["requests"] / o["requests"] for name, c in s["classes"].items()}
    assert shares["short"] == pytest.approx(0.3, abs=0.03)
    assert shares["medium"] == pytest.approx(0.4, abs=0.03)
    assert shares["long"] == pytest.approx(0.3, abs=0.03)
    assert s["users_max"] == 40
    assert o["output_tokens_from_usage_ratio"] == 1.0
    # The console table was printed by the same run.
    assert "llmload summary" in output and "overall" in output
