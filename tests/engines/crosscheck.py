"""llmload's client-side TTFT/ITL/TPOT next to llama-server's own per-request timings.

:func:`crosscheck` runs ``llmload run`` (the real CLI, one Locust process) against a running
llama-server at a fixed user count, reads llmload's summary and raw records, pairs each
finished request with the server's own timings of it, and returns both sides' medians:

* client TTFT (request sent -> first content chunk) vs server ``prompt_ms`` (prompt
  processing), request by request: their difference is what the server's figure leaves out:
  waiting for a slot or for the running batch's step (queue), HTTP, JSON, tokenizing and
  templating, network. It is > 0 for every request (the client's interval holds the server's).
* client TPOT ((last - first content chunk) / (tokens - 1)) and ITL p50 (gaps between content
  chunks) vs server ``predicted_per_token_ms`` (``predicted_ms / (predicted_n - 1)``, the
  same formula as TPOT, measured inside the server).

The server's figures come from each request's own stream (``timings``, kept in llmload's
records as ``server_prefill_ms`` / ``server_decode_ms``); the server's log gives the count
of requests it finished.

Used by tests/integration/test_llamacpp.py (loose ratios) and benchmarks/llamacpp_crosscheck.py
(prints the figures in docs/real_engines.md).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import orjson

from tests.engines.llama_server import LlamaServer
from tests.helpers.harness import run_cli

__all__ = ["crosscheck", "run_llmload", "write_profile"]


def write_profile(path: Path, input_tokens: int | str, output_tokens: int | str, prompt: str = "") -> str:
    """A one-class profile file; ``prompt`` = a dataset path (identical prompts) instead of synthetic ones."""
    source = f'prompt = {{source = "dataset", path = "{prompt}", format = "prompts"}}\n' if prompt else ""
    inputs = "" if prompt else f"input_tokens = {input_tokens}\n"
    path.write_text(
        f'name = "llamacpp"\n[[classes]]\nname = "req"\nweight = 1\n{inputs}output_tokens = {output_tokens}\n{source}'
    )
    return str(path)


def run_llmload(url: str, workdir: Path, *args: str, timeout: float = 120.0) -> tuple[dict, list[dict], str]:
    """``llmload run --headless ... --records-jsonl``: (summary, records, console output)."""
    records = workdir / "records.jsonl"
    records.unlink(missing_ok=True)
    code, output, summary = run_cli(
        ["--headless", "--host", url, "--no-run-dir", "--seed", "7", "--loglevel", "WARNING",
         "--records-jsonl", str(records), *args],
        workdir,
        timeout=timeout,
    )  # fmt: skip
    # Locust exits 1 when a request failed: the callers judge errors from the summary.
    assert code in (0, 1) and summary is not None, output[-3000:]
    lines = records.read_bytes().splitlines() if records.exists() else []
    return summary, [orjson.loads(line) for line in lines], output


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def crosscheck(
    server: LlamaServer, workdir: Path, users: int, seconds: int, input_tokens: int = 50, output_tokens: int = 64
) -> dict:
    """Run llmload at ``users`` for ``seconds``; both sides' figures (ms) for the requests that finished."""
    workdir.mkdir(parents=True, exist_ok=True)
    profile = write_profile(
        workdir / "crosscheck.toml",
        f'{{dist = "uniform", min = {input_tokens - 10}, max = {input_tokens + 10}}}',
        output_tokens,
    )
    before = len(server.timings())
    summary, records, _ = run_llmload(
        server.url, workdir, "-u", str(users), "-r", str(users), "-t", f"{seconds}s", "--profile", profile
    )
    timings = server.timings()[before:]
    o = summary["overall"]
    # Each finished request paired with the server's own figures for it: the stream's ``timings``
    # object (llama.cpp), kept in the record as server_prefill_ms (prompt_ms) and server_decode_ms
    # (predicted_ms). Medians of two different sets (the client's records, the server's log lines
    # read at another moment) once put the client's TTFT median below the server's prompt median.
    ok = [r for r in records if r["outcome"] == "ok" and r["server_prefill_ms"] is not None]
    ttft = [r["chunks_ns"][0] / 1e6 for r in ok]
    tpot = [(r["chunks_ns"][-1] - r["chunks_ns"][0]) / 1e6 / (r["output_tokens"] - 1) for r in ok]
    prompt = [r["server_prefill_ms"] for r in ok]
    per_token = [r["server_decode_ms"] / (r["output_tokens"] - 1) for r in ok]
    gaps = [t - p for t, p in zip(ttft, prompt, strict=True)]
    logged = [t for t in timings if t["predicted_n"] == output_tokens]  # finished requests (not cut at the end)
    out = {
        "users": users,
        "seconds": seconds,
        "requests_ok": o["ok"],
        "paired": len(ok),
        "errors": o["errors"],
        "errors_by_kind": summary["errors_by_kind"],
        "reconnects": o.get("reconnects"),
        "server_requests": len(logged),
        "client_ttft_p50": _median(ttft),
        "client_itl_p50": o["itl_ms"]["p50"],
        "client_tpot_p50": _median(tpot),
        "server_prompt_ms_p50": _median(prompt),
        "server_per_token_p50": _median(per_token),
        "ttft_minus_prompt_p50": _median(gaps),
        "ttft_minus_prompt_min": min(gaps) if gaps else None,
        "client_saturated": summary["client"]["saturated"],
    }
    if out["client_tpot_p50"] and out["server_per_token_p50"]:
        out["tpot_ratio"] = out["client_tpot_p50"] / out["server_per_token_p50"]
        out["itl_ratio"] = out["client_itl_p50"] / out["server_per_token_p50"]
    return out
