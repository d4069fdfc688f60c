"""``--api openai-embeddings`` against the simulator's ``/v1/embeddings`` (prefill-only cost, llmload.sim.embeddings).

* a short ladder (1 then 4 users, batches of 4 texts) on the engine model: a batch is prefill only, so 4 users
  queue behind each other's prefill, and the verdict, judged on latency p50 (E2E) instead of TTFT/TPOT,
  breaches at 4 users; the figures: texts and input tokens per second, 0 output tokens, no TPOT;
* bad inputs give the server's own message as the error: an empty input (sent through ``--extra-body``, which
  wins over the built body) and an input over the server's length limit (``--embedding-max-tokens``).

The same against llama.cpp's ``llama-server --embeddings``: tests/integration/test_llamacpp_embeddings.py.
"""

from __future__ import annotations

import pytest

from tests.helpers.harness import run_cli

pytestmark = pytest.mark.integration

COMMON = ["--headless", "--api", "openai-embeddings", "--no-run-dir", "--seed", "7", "--loglevel", "WARNING",
          "--only-summary"]  # fmt: skip


def profile(tmp_path, low: int, high: int) -> str:
    path = tmp_path / "embed.toml"
    path.write_text('name = "embed"\n[[classes]]\nname = "docs"\nweight = 1\n'
                    f'input_tokens = {{dist = "uniform", min = {low}, max = {high}}}\noutput_tokens = 1\n')  # fmt: skip
    return str(path)


def test_a_ladder_is_judged_on_latency(sim, tmp_path):
    url = sim("--preset", "healthy", "--time-scale", "0.25", "--embedding-dim", "64")
    code, output, s = run_cli([*COMMON, "--host", url, "--profile", profile(tmp_path, 150, 250), "--inputs-per-request",
                               "4", "--ladder", "1,4", "--step-time", "5s", "--step-warmup", "1s"], tmp_path, timeout=90)  # fmt: skip
    assert s is not None, output[-3000:]
    steps = s["steps"]
    assert [st["users"] for st in steps] == [1, 4], output[-2000:]
    for st in steps:
        o = st["overall"]
        assert o["errors"] == 0 and o["ok"] >= 10 and o["output_tokens"] == 0 and o["tpot_ms"]["p50"] is None, o
        e = o["inputs"]
        assert e["inputs"] == 4 * e["requests"] == 4 * o["ok"] and e["input_tokens"] == o["input_tokens"]
        assert e["inputs_per_s"] > 0 and e["input_tokens_per_s"] > 100 * e["inputs_per_s"]  # 150..250 tokens each
    v = s["verdict"]
    assert set(v["limits"]) == {"e2e_p50_ms", "error_rate"}, v
    assert v["status"] == "breach" and v["safe_users"] == 1 and v["breach"]["metric"] == "e2e_p50", v
    assert v["breach"]["ratio"] > 1.5, v
    assert "latency p50 (E2E) broke the limit at 4 users" in output and "inputs/s (4 per request)" in output
    assert "   lat p50   lat p99" in output and "latency p50 grade (E2E; " in output  # no TTFT for one JSON answer


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--extra-body", '{"input": ""}'], "input 0 is empty: every input must hold at least one token"),
        (["--inputs-per-request", "2"], "input 0 has 40 tokens, over this model's maximum input length of 32 tokens"),
    ],
    ids=["empty", "too-long"],
)
def test_bad_inputs_give_the_servers_message(sim, tmp_path, flags, message):
    url = sim("--ttft-ms", "5", "--itl-ms", "1", "--embedding-max-tokens", "32")
    code, output, s = run_cli([*COMMON, "--host", url, "--profile", profile(tmp_path, 40, 40), "-u", "1", "-r", "1",
                               "-t", "2s", *flags], tmp_path, timeout=60)  # fmt: skip
    assert s is not None, output[-3000:]
    c = s["classes"]["docs"]
    assert c["ok"] == 0 and c["errors"] > 0 and set(c["errors_by_kind"]) == {"http_400"}, c["errors_by_kind"]
    assert message in c["errors_examples"]["http_400"], c["errors_examples"]
