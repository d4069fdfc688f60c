"""Diagnosis rules about the GPU's memory and compute: KV-cache capacity and fragmentation, decode bandwidth, prefill.

Same conventions as :mod:`~llmload.analysis.rules_queue` (one finding per rule at most,
at the lowest step where its evidence holds; thresholds are the module constants, tabled
in docs/diagnosis.md). ``BW`` is the GPU's memory-bandwidth utilization, ``SM`` its SM
activity, ``P`` the engine's preemption rate.
"""

from __future__ import annotations

from llmload.analysis.findings import Context, Finding, rule
from llmload.analysis.rules_queue import KV_LOW, error_groups
from llmload.analysis.steps import StepView
from llmload.analysis.verdict import ERROR_RATE_LIMIT

__all__ = [
    "BW_HIGH",
    "ITL_TAIL",
    "KV_FULL",
    "PREFILL_SHARE",
    "decode_bandwidth",
    "kv_capacity",
    "kv_fragmentation",
    "prefill_interference",
]

#: KV usage at or above this (window mean), or a window maximum >= KV_FULL_MAX: the cache is full.
KV_FULL = 0.9
KV_FULL_MAX = 0.97
#: KV usage below this while requests fail for memory: free blocks are left.
KV_FREE = 0.85
#: GPU memory used / total below this: memory is left.
MEM_FREE = 0.9
#: Bandwidth utilization at or above this: decode moves bytes most of the time (very high: BW_VERY_HIGH).
BW_HIGH = 0.5
BW_VERY_HIGH = 0.7
#: Bandwidth used while the GPU is busy (BW / U) at or above this: the busy time is spent moving bytes.
BW_BUSY = 0.6
#: ITL p99 / ITL p50 at or above this, and ITL p99 at least ITL_GROWTH x the baseline's: stalls.
ITL_TAIL = 5.0
ITL_GROWTH = 3.0
#: A class whose mean prompt has at least this many tokens, or 4x the shortest class's: long prompts.
LONG_PROMPT = 1000
#: Share of time a prefill is running (request rate x mean prefill time) at or above this: prefill-heavy.
PREFILL_SHARE = 0.2


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.0f} %"


def _memory_share(s: StepView) -> float | None:
    used, total = s.g("memory_used_bytes"), s.g("memory_total_bytes")
    return used / total if used is not None and total else None


@rule("kv_capacity", "engine KV cache", needs=("server",))
def kv_capacity(ctx: Context) -> list[Finding]:
    """KV >= 0.9 (or peaks >= 0.97) and P > 0: high; full without preemptions, or preempting at KV >= 0.7: medium."""
    for s in ctx.steps:
        kv, kv_max, pre = s.s("kv_cache_usage"), s.s("kv_cache_usage", "max"), s.s("preemptions_rate_per_s")
        full = kv is not None and (kv >= KV_FULL or (kv_max is not None and kv_max >= KV_FULL_MAX and kv >= KV_LOW))
        preempting = pre is not None and pre > 0
        if full and preempting:
            conf = "high"
        elif full or (preempting and (kv is None or kv >= KV_LOW)):
            conf = "medium"
        else:
            continue
        text = [f"KV cache {_pct(kv)} used on average at {s.label} (peak {_pct(kv_max)})"]
        if pre is not None:
            text.append(f"{pre:.2f} preemptions/s (~{pre * s.steady_s:.0f} in the window): each one recomputes a prompt"
                        if preempting else "no preemptions yet")  # fmt: skip
        w = s.s("waiting")
        if w is not None:
            text.append(f"{w:.1f} requests wait, {s.s('running') or 0:.1f} run")
        return [Finding(
            "kv_capacity", "engine KV cache", "KV-cache capacity", conf,
            evidence={"kv_cache_usage": kv, "kv_cache_usage_max": kv_max, "preemptions_per_s": pre, "waiting": w,
                      "running": s.s("running"), "tpot_p50_ratio": ctx.ratio(s, "tpot_p50"), "ttft_p99_ratio": ctx.ratio(s, "ttft_p99")},
            evidence_text=text,
            change="The KV cache is full and the engine preempts (recomputes) requests: cap concurrency at the safe level, "
            "or make room: FP8 KV cache (vLLM --kv-cache-dtype fp8), a higher --gpu-memory-utilization, a shorter "
            "--max-model-len, tensor parallelism or more GPUs, a model with fewer KV bytes per token (GQA/MLA).",
            step=s.index, users=s.users, explains=("tpot", "ttft"),
        )]  # fmt: skip
    return []


@rule("kv_fragmentation", "engine KV cache", needs=("server",), wants=("gpu",))
def kv_fragmentation(ctx: Context) -> list[Finding]:
    """Errors >= 1 %, mostly server-side (5xx, error events), while KV < 0.85 (or memory < 0.9) and P = 0."""
    for s in ctx.steps:
        er = s.perf.error_rate
        if er is None or er < ERROR_RATE_LIMIT:
            continue
        server_share = error_groups(s.perf).get("server", 0.0)
        kv, mem, pre = s.s("kv_cache_usage"), _memory_share(s), s.s("preemptions_rate_per_s")
        free = (kv is not None and kv < KV_FREE) or (kv is None and mem is not None and mem < MEM_FREE)
        if server_share < 0.5 or not free:
            continue
        if pre is not None and pre > 0:
            conf = "low"  # preempting: more likely plain capacity (kv_capacity)
        elif kv is not None and kv < 0.8 and pre is not None and server_share >= 0.8:
            conf = "high"
        else:
            conf = "medium"
        text = [
            f"{_pct(er)} of requests fail at {s.label}, {_pct(server_share)} of them server errors (5xx, error events)"
        ]
        text.append(
            f"yet the KV cache is only {_pct(kv)} used"
            if kv is not None
            else f"yet GPU memory is only {_pct(mem)} used"
        )
        if pre is not None:
            text.append("no preemptions" if pre == 0 else f"{pre:.2f} preemptions/s")
        return [Finding(
            "kv_fragmentation", "engine KV cache", "KV-cache fragmentation (out of memory with memory free)", conf,
            evidence={"error_rate": er, "server_error_share": round(server_share, 3), "kv_cache_usage": kv,
                      "memory_used_share": None if mem is None else round(mem, 3), "preemptions_per_s": pre},
            evidence_text=text,
            change="Requests fail for lack of contiguous KV memory although part of the cache is free: the allocator "
            "fragments or over-reserves. Use a paged KV cache (the vLLM/SGLang default), smaller blocks or smaller "
            "max_tokens reservations; read the server log's out-of-memory messages and vllm:cache_config_info.",
            step=s.index, users=s.users, explains=("errors",),
        )]  # fmt: skip
    return []


@rule("decode_bandwidth", "GPU decode", needs=("gpu",), wants=("server",))
def decode_bandwidth(ctx: Context) -> list[Finding]:
    """TPOT p50 >= (1 + d/2)x baseline as the batch at least doubles, BW >= 0.5, the KV cache not full."""
    base = ctx.baseline
    if base is None:
        return []
    base_batch = base.s("running") or float(base.users)
    for s in ctx.loaded():
        r, bw = ctx.ratio(s, "tpot_p50"), s.g("memory_bandwidth_utilization")
        if r is None or r < 1 + ctx.degradation / 2 or bw is None or bw < BW_HIGH:
            continue
        batch = s.s("running") or float(s.users)
        kv, pre = s.s("kv_cache_usage"), s.s("preemptions_rate_per_s")
        if batch < 2 * base_batch or (kv is not None and kv >= KV_FULL and pre is not None and pre > 0):
            continue
        util = s.g("utilization")
        busy_bw = bw / util if util else None
        tpots = [t.perf.tpot_p50 for t in [base, *ctx.loaded()] if t.index is not None and t.index <= (s.index or 0)]
        rising = all(b >= a * 0.95 for a, b in zip(tpots, tpots[1:], strict=False) if a is not None and b is not None)
        strong = bw >= BW_VERY_HIGH or (busy_bw is not None and busy_bw >= BW_BUSY)
        conf = (
            "low" if ctx.coarse_bandwidth else ("high" if r > 1 + ctx.degradation and strong and rising else "medium")
        )
        text = [f"TPOT p50 {r:.2f}x the baseline at {s.label} (batch {batch:.1f} vs {base_batch:.1f})"
                + (", rising step after step" if rising else "")]  # fmt: skip
        text.append(
            f"memory bandwidth {_pct(bw)} used"
            + (f", {_pct(busy_bw)} of the GPU's busy time" if busy_bw is not None else "")
        )
        if ctx.coarse_bandwidth:
            text.append("the bandwidth figure is coarse (NVML memory-busy time): low confidence")
        return [Finding(
            "decode_bandwidth", "GPU decode", "Decode memory-bandwidth bound", conf,
            evidence={"tpot_p50_ratio": round(r, 3), "batch": batch, "baseline_batch": base_batch, "memory_bandwidth_utilization": bw,
                      "gpu_utilization": util, "bandwidth_share_of_busy": None if busy_bw is None else round(busy_bw, 3),
                      "kv_cache_usage": kv},
            evidence_text=text,
            change="Decode is memory-bandwidth bound: every step reads the weights and each sequence's KV cache, so TPOT "
            "grows with batch x context. Move fewer bytes per token (FP8/INT4 weights, FP8 KV cache, a GQA/MLA model, "
            "speculative decoding) or add GPUs (tensor parallel) / replicas; otherwise cap concurrency at the safe level.",
            step=s.index, users=s.users, explains=("tpot",),
        )]  # fmt: skip
    return []


def _long_prompts(s: StepView) -> float | None:
    """The longest class's mean prompt when the mix has long prompts (module constant), else None."""
    means = [p.input_tokens_mean for p in s.classes.values() if p.input_tokens_mean] or (
        [s.perf.input_tokens_mean] if s.perf.input_tokens_mean else []
    )
    if not means:
        return None
    longest = max(means)
    return longest if longest >= LONG_PROMPT or longest >= 4 * min(means) else None


def _prefill_tail(s: StepView) -> tuple[str, float] | None:
    """The class whose p90-tail TTFT is most prefill, and that share, from per-request server timing."""
    shares = [(n, v) for n, p in s.classes.items() if (v := p.tail_share("prefill")) is not None]
    return max(shares, key=lambda nv: nv[1]) if shares else None


@rule("prefill_interference", "engine prefill", needs=("server",), wants=("gpu",))
def prefill_interference(ctx: Context) -> list[Finding]:
    """ITL p99 >= 5x ITL p50 and >= 3x the baseline's, long prompts, prefill time share >= 0.2 (or SM >= 0.7 with BW < 0.5)."""
    base = ctx.baseline
    if base is None or base.perf.itl_p99 is None:
        return []
    for s in ctx.loaded():
        p50, p99 = s.perf.itl_p50, s.perf.itl_p99
        if p50 is None or p99 is None or p99 < ITL_TAIL * p50 or p99 < ITL_GROWTH * base.perf.itl_p99:
            continue
        longest = _long_prompts(s)
        if longest is None:
            continue
        rate = s.s("requests_finished_rate_per_s") or s.perf.req_s
        prefill = s.s("prefill_time_mean_ms")
        share = min(1.0, rate * prefill / 1000.0) if prefill is not None and rate else None
        sm, bw = s.g("sm_activity"), s.g("memory_bandwidth_utilization")
        compute_hot = sm is not None and sm >= 0.7 and (bw is None or bw < 0.5)
        phased = _prefill_tail(s)  # per-request server timing: (class, prefill share of its p90-tail TTFT)
        if not ((share is not None and share >= PREFILL_SHARE) or compute_hot or (phased and phased[1] >= 0.5)):
            continue
        conf = "high" if share is not None and share >= 0.3 and p99 >= 8 * p50 else "medium"
        if phased and phased[1] >= 0.5 and p99 >= 8 * p50:
            conf = "high"
        text = [f"ITL p99 {p99:.0f} ms vs p50 {p50:.0f} ms at {s.label} ({p99 / p50:.0f}x; baseline p99 {base.perf.itl_p99:.0f} ms)",
                f"prompts up to ~{longest:.0f} tokens in the mix"]  # fmt: skip
        if share is not None:
            text.append(f"a prefill runs {_pct(share)} of the time ({rate:.1f} req/s x {prefill:.0f} ms)")
        if compute_hot:
            text.append(f"SM activity {_pct(sm)} with bandwidth {_pct(bw)}: compute-bound phases")
        if phased:
            cov = s.classes[phased[0]].phase_coverage
            text.append(f"per-request server timing ({_pct(cov)} of requests): prefill is {_pct(phased[1])} of TTFT "
                        f"for {phased[0]}'s requests at or above its p90")  # fmt: skip
        return [Finding(
            "prefill_interference", "engine prefill", "Prefill compute / prefill-decode interference", conf,
            evidence={"itl_p99_ms": p99, "itl_p50_ms": p50, "itl_p99_ratio": round(p99 / base.perf.itl_p99, 3),
                      "ttft_p99_ratio": ctx.ratio(s, "ttft_p99"), "longest_prompt_tokens": round(longest),
                      "prefill_time_share": None if share is None else round(share, 3), "sm_activity": sm,
                      "prefill_share_p90_tail": None if not phased else round(phased[1], 3)},
            evidence_text=text,
            change="Long prompts' prefill stalls the running decodes: enable chunked prefill (vLLM "
            "--enable-chunked-prefill, with --max-num-batched-tokens small enough that one chunk stays short), or "
            "separate prefill from decode (disaggregated serving); prefix caching removes repeated prompt work.",
            step=s.index, users=s.users, explains=("tpot", "ttft"),
        )]  # fmt: skip
    return []
