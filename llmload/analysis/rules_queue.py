"""Diagnosis rules about where requests wait: the client, the gateway, the engine's scheduler.

Each rule reads the :class:`~llmload.analysis.findings.Context` and returns the findings it
fires (at most one each: at the lowest step where its evidence holds). Thresholds are the
module constants; docs/diagnosis.md has the table. Notation per step (steady-window means):
``W`` waiting, ``R`` running, ``KV`` KV-cache usage, ``U`` GPU utilization, ``C`` the
client's mean in-flight requests, ``d`` the verdict's degradation. Where the server sent
per-request timing for most requests (``Perf.tail``: shares of the p90-tail TTFT), the
gateway and admission rules use it and say so in their evidence.
"""

from __future__ import annotations

from llmload.analysis.findings import Context, Finding, rule
from llmload.analysis.steps import Perf, StepView
from llmload.analysis.verdict import ERROR_RATE_LIMIT

__all__ = [
    "CAP_NEAR",
    "GPU_BUSY",
    "GPU_LOW",
    "KV_LOW",
    "PHASE_LOW",
    "PHASE_MAJOR",
    "SM_LOW",
    "WAITING_IDLE",
    "WAITING_QUEUE",
    "admission_cap",
    "at_cap",
    "engine_saturated",
    "error_groups",
    "errors_shedding",
    "gateway_queueing",
    "load_generator_saturated",
    "scheduler_starved",
]

#: W at or above this (mean over the window): a sustained engine queue.
WAITING_QUEUE = 1.0
#: W at or below this: no engine queue.
WAITING_IDLE = 0.5
#: The engine holds fewer than (1 - this) of the client's in-flight requests: the rest wait before it.
GAP_SHARE = 0.25
#: R within this share of the highest R of the run: at the ceiling.
CAP_NEAR = 0.9
#: KV usage below this: the cache is not what limits the batch.
KV_LOW = 0.7
#: GPU utilization at or above this: busy.
GPU_BUSY = 0.85
#: A phase holding at least this share of the p90-tail TTFT is where the tail waits; below PHASE_LOW it is not.
PHASE_MAJOR = 0.5
PHASE_LOW = 0.2
#: GPU utilization / SM activity below these while requests wait: the GPU is starved.
GPU_LOW = 0.6
SM_LOW = 0.4

_GROUPS = {"http_429": "shed", "http_503": "shed", "http_502": "gateway", "http_504": "gateway", "connection": "connection",
           "ttft_timeout": "timeout", "stall_timeout": "timeout", "total_timeout": "timeout", "server_error": "server"}  # fmt: skip


def error_groups(p: Perf) -> dict[str, float]:
    """Share of a step's errors per group: shed (429/503), gateway (502/504), server (other 5xx, error events), timeout, connection, other."""
    total = sum(p.errors_by_kind.values())
    out: dict[str, float] = {}
    for kind, n in p.errors_by_kind.items():
        group = _GROUPS.get(kind) or ("server" if kind.startswith("http_5") else "other")
        out[group] = out.get(group, 0.0) + n / total if total else 0.0
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.0f} %"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}"


def phase_text(p: Perf, part: str, name: str) -> str:
    """Evidence line for a phase share of the p90-tail TTFT (per-request server timing)."""
    return (
        f"per-request server timing ({_pct(p.phase_coverage)} of requests): {name} is {_pct(p.tail_share(part))} "
        "of TTFT for the requests at or above its p90"
    )


@rule("load_generator_saturated", "client")
def load_generator_saturated(ctx: Context) -> list[Finding]:
    """The load generator ran out of CPU (``summary.client.saturated``): its latencies include its own delays."""
    if not ctx.client.saturated:
        return []
    procs = list(ctx.client.saturated_processes)
    return [Finding(
        "load_generator_saturated", "client", "The load generator itself was saturated", "high",
        evidence={"saturated_processes": len(procs)},
        evidence_text=[f"{', '.join(procs) or 'a process'}: CPU >= 85 % of a core or event-loop lag >= 50 ms, 2 reports in a row"],
        change="Add load-generating processes (--processes N, or workers on more hosts) and run again: until then the "
        "latencies include the client's own delays and no server-side finding can be trusted.",
        explains=("ttft", "tpot"),
    )]  # fmt: skip


@rule("errors_shedding", "client")
def errors_shedding(ctx: Context) -> list[Finding]:
    """Error rate >= 1 % at a step; confidence from what the errors are (429/503 = shedding)."""
    for s in ctx.steps:
        er = s.perf.error_rate
        if er is None or er < ERROR_RATE_LIMIT:
            continue
        groups = error_groups(s.perf)
        top = max(groups, key=lambda g: groups[g]) if groups else "other"
        conf = "high" if groups.get("shed", 0) >= 0.5 else ("medium" if groups.get("timeout", 0) >= 0.5 else "low")
        change = {
            "shed": "An admission limit answers 429/503 (gateway rate limit, engine queue cap such as --max-waiting): "
            "configure the gateway's concurrency limit at the safe level so excess requests queue instead of failing, "
            "or raise the limit if the server has headroom.",
            "timeout": "Requests run past the client's deadlines because queues are too long: cap concurrency at the safe "
            "level (see the queueing findings), or raise --ttft-timeout/--request-timeout if the deadlines are too tight.",
            "gateway": "A proxy or gateway answers 502/504: its upstream timeouts or connection limits are the bottleneck.",
            "connection": "Connections are refused or reset: a proxy/gateway connection limit, or the server restarting.",
        }.get(top, "The server fails requests under load: read its log (out-of-memory, crashes); see the KV findings.")
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(s.perf.errors_by_kind.items(), key=lambda kv: -kv[1]))
        return [Finding(
            "errors_shedding", "client" if top == "timeout" else ("gateway" if top in ("shed", "gateway", "connection") else "engine"),
            "Errors / load shedding", conf,
            evidence={"error_rate": er, "errors": s.perf.errors, **{f"share_{g}": round(v, 3) for g, v in groups.items()}},
            evidence_text=[f"{_pct(er)} of requests failed at {s.label} (limit 1 %)", f"errors by kind: {kinds or 'n/a'}"],
            change=change, step=s.index, users=s.users, explains=("errors",),
        )]  # fmt: skip
    return []


@rule("gateway_queueing", "gateway", needs=("server",))
def gateway_queueing(ctx: Context) -> list[Finding]:
    """TTFT p50 > (1+d)× baseline while W <= 0.5, and the engine sees fewer requests than are in flight (or its TTFT ≪ the client's)."""
    for s in ctx.loaded():
        r, w, run = ctx.ratio(s, "ttft_p50"), s.s("waiting"), s.s("running")
        share = s.perf.tail_share("gateway")
        if share is not None:  # per-request evidence decides, whatever the window-averaged signals say
            if r is None or r <= 1 + ctx.degradation or share < PHASE_MAJOR:
                continue
            return [_gateway_finding(ctx, s, r, share)]
        if r is None or r <= 1 + ctx.degradation or w is None or run is None or w > WAITING_IDLE:
            continue
        c = s.perf.in_flight
        gap = c - (run + w) if c is not None else None
        gap_ok = c is not None and gap is not None and gap >= 1 and run + w < (1 - GAP_SHARE) * c
        server_ttft, client_ttft = s.s("ttft_mean_ms"), s.perf.ttft_mean
        ttft_ok = bool(server_ttft is not None and client_ttft and server_ttft < 0.5 * client_ttft)
        if not (gap_ok or ttft_ok):
            continue
        text = [f"TTFT p50 is {r:.2f}x the baseline at {s.label}, yet the engine's queue is empty (waiting {_num(w)})"]
        if gap is not None:
            text.append(
                f"the client has {_num(c)} requests in flight, the engine holds {_num(run + w)} (running + waiting)"
            )
        if server_ttft is not None:
            text.append(f"server-side TTFT {server_ttft:.0f} ms vs {client_ttft:.0f} ms at the client")
        return [Finding(
            "gateway_queueing", "gateway", "Queueing before the engine (gateway, proxy or client)",
            "high" if gap_ok and ttft_ok else "medium",
            evidence={"ttft_p50_ratio": round(r, 3), "in_flight": c, "running": run, "waiting": w,
                      "gap": None if gap is None else round(gap, 2), "server_ttft_mean_ms": server_ttft, "client_ttft_mean_ms": client_ttft},
            evidence_text=text,
            change="Requests wait before they reach the engine: raise the concurrency limit (and connection pool) of the "
            "gateway, load balancer or proxy in front of it, check that component's CPU, and check client.saturated.",
            step=s.index, users=s.users, explains=("ttft",),
        )]  # fmt: skip
    return []


def _gateway_finding(ctx: Context, s: StepView, r: float, share: float) -> Finding:
    """gateway_queueing from per-request server timing: the gateway holds most of the tail's TTFT."""
    text = [
        f"TTFT p50 is {r:.2f}x the baseline at {s.label}",
        phase_text(s.perf, "gateway", "the gateway (client TTFT - server TTFT)"),
    ]
    return Finding(
        "gateway_queueing", "gateway", "Queueing before the engine (gateway, proxy or client)", "high",
        evidence={"ttft_p50_ratio": round(r, 3), "gateway_share_p90_tail": round(share, 3),
                  "phase_coverage": s.perf.phase_coverage, "waiting": s.s("waiting")},
        evidence_text=text,
        change="Requests wait before they reach the engine: raise the concurrency limit (and connection pool) of the "
        "gateway, load balancer or proxy in front of it, check that component's CPU, and check client.saturated.",
        step=s.index, users=s.users, explains=("ttft",),
    )  # fmt: skip


def _ceiling(ctx: Context) -> float:
    """The highest running count seen in any step (its window maximum)."""
    return max((s.s("running", "max") or s.s("running") or 0.0 for s in ctx.steps), default=0.0)


def _at(s: StepView) -> str:
    """Where a finding shows: ``8 users``, or a rate step's ``4 req/s`` (a rate ladder's steps share one -u)."""
    return s.label if s.rate_offered is not None else f"{s.users} users"


def at_cap(ctx: Context, s: StepView) -> bool:
    """R at the run's ceiling (>= 90 %) while W >= 1 and the step has more users than the ceiling."""
    run, w, ceiling = s.s("running"), s.s("waiting"), _ceiling(ctx)
    return (
        run is not None
        and w is not None
        and ceiling >= 1
        and w >= WAITING_QUEUE
        and run >= CAP_NEAR * ceiling
        and s.users > ceiling
    )


@rule("admission_cap", "engine scheduler", needs=("server",), wants=("gpu",))
def admission_cap(ctx: Context) -> list[Finding]:
    """R flat at a ceiling, W >= 1 and growing, KV < 0.7, no preemptions, GPU not saturated: a batch cap."""
    ceiling = _ceiling(ctx)
    for s in ctx.loaded():
        if not at_cap(ctx, s):
            continue
        kv, pre = s.s("kv_cache_usage"), s.s("preemptions_rate_per_s")
        if (kv is not None and kv >= KV_LOW) or (pre is not None and pre > 0):
            continue  # the KV cache limits the batch: the KV rules say so
        run, w = s.s("running") or 0.0, s.s("waiting") or 0.0
        flat = [t for t in ctx.steps if t.index is not None and t.index >= 0 and (rt := t.s("running")) is not None
                and abs(rt - run) <= max(1.0, 0.1 * run)]  # fmt: skip
        grows = any((t.s("waiting") or 0.0) > w + 0.5 for t in ctx.after(s)[1:])
        util, sm = s.g("utilization"), s.g("sm_activity")
        room = (
            None
            if util is None and sm is None
            else ((util is not None and util < GPU_BUSY) or (sm is not None and sm < 0.7))
        )
        conf = "low" if room is False else ("high" if len(flat) >= 2 and grows and room else "medium")
        queue = s.perf.tail_share("server_queue")
        if queue is not None:  # per-request evidence: is the tail's TTFT spent in the engine's queue?
            conf = "low" if queue < PHASE_LOW else ("high" if queue >= PHASE_MAJOR and room is not False else conf)
        levels = (f"{', '.join(f'{t.rate_offered:g}' for t in flat)} req/s" if s.rate_offered is not None
                  else f"{', '.join(str(t.users) for t in flat)} users")  # fmt: skip
        text = [
            f"running stays at {run:.1f} (highest {ceiling:g}) over {len(flat)} steps: {levels}",
            f"{w:.1f} requests wait in the engine at {_at(s)}" + (", more at the next steps" if grows else ""),
        ]
        if kv is not None:
            text.append(f"KV cache only {_pct(kv)} used")
        if util is not None:
            text.append(f"GPU busy {_pct(util)}: room for a bigger batch" if room else f"GPU busy {_pct(util)}")
        if queue is not None:
            text.append(phase_text(s.perf, "server_queue", "the engine's queue"))
        return [Finding(
            "admission_cap", "engine scheduler", "Batch / admission cap", conf,
            evidence={"running": run, "running_ceiling": ceiling, "waiting": w, "flat_steps": len(flat), "users": s.users,
                      "kv_cache_usage": kv, "gpu_utilization": util, "sm_activity": sm, "queue_share_p90_tail": queue},
            evidence_text=text,
            change=f"The engine runs at most ~{ceiling:g} sequences at once and queues the rest: raise its batch cap "
            "(vLLM --max-num-seqs, SGLang --max-running-requests, TGI --max-batch-size/--max-batch-total-tokens, "
            "llama.cpp --parallel) while the KV cache and the GPU have room, then run the ladder again.",
            step=s.index, users=s.users, explains=("ttft",),
        )]  # fmt: skip
    return []


@rule("scheduler_starved", "engine scheduler", needs=("server", "gpu"))
def scheduler_starved(ctx: Context) -> list[Finding]:
    """W >= 1 while U < 0.6 or SM activity < 0.4: requests wait and the GPU idles."""
    for s in ctx.steps:
        w, util, sm = s.s("waiting"), s.g("utilization"), s.g("sm_activity")
        low = (util is not None and util < GPU_LOW) or (sm is not None and sm < SM_LOW)
        if w is None or w < WAITING_QUEUE or not low:
            continue
        capped = at_cap(ctx, s)
        conf = "low" if capped else ("high" if util is not None and util < 0.5 else "medium")
        text = [f"{w:.1f} requests wait at {s.label} while the GPU is busy only {_pct(util)}"
                + (f" (SM activity {_pct(sm)})" if sm is not None else "")]  # fmt: skip
        if capped:
            text.append("running sits at its ceiling: the batch cap (see that finding) is the first thing to change")
        return [Finding(
            "scheduler_starved", "engine scheduler", "Scheduler starving the GPU", conf,
            evidence={"waiting": w, "running": s.s("running"), "gpu_utilization": util, "sm_activity": sm, "at_batch_cap": capped},
            evidence_text=text,
            change="The engine does not keep the GPU busy while requests wait: raise the per-step token budget "
            "(vLLM --max-num-batched-tokens), check the server's CPU (scheduling, detokenization, sampling take host time "
            "between GPU steps), and structured-output grammar queues; a larger batch amortizes the host overhead.",
            step=s.index, users=s.users, explains=("ttft",),
        )]  # fmt: skip
    return []


@rule("engine_saturated", "engine capacity", needs=("server",), wants=("gpu",))
def engine_saturated(ctx: Context) -> list[Finding]:
    """TTFT degraded, W >= 1, R still growing (no cap), KV < 0.9, GPU busy: the engine is past its knee."""
    prev: StepView | None = ctx.baseline
    for s in ctx.loaded():
        w, run, kv = s.s("waiting"), s.s("running"), s.s("kv_cache_usage")
        r = ctx.ratio(s, "ttft_p50")
        before, prev = prev, s
        if w is None or run is None or w < WAITING_QUEUE or r is None or r <= 1 + ctx.degradation:
            continue
        if (kv is not None and kv >= 0.9) or at_cap(ctx, s):
            continue  # the KV and admission rules explain this queue
        util = s.g("utilization")
        q, t = s.s("queue_time_mean_ms"), s.s("ttft_mean_ms")
        qshare = q / t if q is not None and t else None
        gain = (s.perf.tok_s / before.perf.tok_s - 1) if before is not None and before.perf.tok_s else None
        busy = util is not None and util >= GPU_BUSY
        conf = "medium" if busy and (qshare is None or qshare >= 0.5) else "low"
        text = [f"{w:.1f} requests wait in the engine at {_at(s)} (running {run:.1f}); TTFT p50 {r:.2f}x the baseline"]
        if util is not None:
            text.append(f"GPU busy {_pct(util)}")
        if qshare is not None:
            text.append(f"queue time is {_pct(qshare)} of the server's TTFT")
        if gain is not None:
            text.append(f"output tokens/s {'+' if gain >= 0 else ''}{gain * 100:.0f} % over the previous step")
        return [Finding(
            "engine_saturated", "engine capacity", "Engine at capacity (queueing past the knee)", conf,
            evidence={"waiting": w, "running": run, "gpu_utilization": util, "queue_share_of_ttft": qshare,
                      "tok_s_gain": None if gain is None else round(gain, 3), "ttft_p50_ratio": round(r, 3)},
            evidence_text=text,
            change="The engine is at its capacity with this model and settings: arrivals exceed what it serves and new "
            "requests queue. Set the gateway limit at the safe level; for more, add replicas or GPUs, or act on the "
            "decode/prefill findings to make each step cheaper.",
            step=s.index, users=s.users, explains=("ttft",),
        )]  # fmt: skip
    return []
