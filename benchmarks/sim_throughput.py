"""Simulator throughput: streamed tokens/s and the simulator's CPU cost per 1k tokens.

Starts ``python -m llmload.sim`` as a child process, then drives ``--streams``
concurrent keep-alive streaming chat requests from a separate process with a minimal
asyncio client (counts tokens per read, no JSON parsing). Over the steady window
(after ``--warmup`` s) it reports tokens/s, the simulator's CPU use read from
``/proc/<pid>/stat`` (cores, CPU seconds per 1k tokens) and the client-measured
TTFT/ITL medians. The simulator is one process on one event loop: "sim cores" <= 1.

Fixed-latency mode (default; fast settings TTFT 0, ITL 2 ms)::

    .venv/bin/python benchmarks/sim_throughput.py --streams 200 500 --itl-ms 2 --seconds 10

The engine model (``--preset``) with fast step settings: ``--time-scale 0.05`` runs
every step 20x faster (a 200-sequence decode step of ~57 ms takes ~2.9 ms), and
``--max-num-seqs`` lets every stream into the batch::

    .venv/bin/python benchmarks/sim_throughput.py --preset healthy --time-scale 0.05 --max-num-seqs 512 \
        --streams 200 500
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import statistics
import time
from pathlib import Path

__all__ = ["main"]

_TOKEN = b'{"content":"'  # in every content chunk, not in the role chunk
_END = b"data: [DONE]\n\n\r\n0\r\n\r\n"


def _sim_cpu_s(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


class _Stream(asyncio.Protocol):
    """One keep-alive connection sending the same streaming request again and again."""

    def __init__(self, request: bytes, stats: dict, max_tokens: int) -> None:
        self.request, self.stats, self.max_tokens = request, stats, max_tokens
        self.tail = b""
        self.seen = 0
        self.t_sent = 0.0
        self.t_prev = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self._send()

    def _send(self) -> None:
        self.seen, self.tail = 0, b""
        self.t_sent = time.perf_counter()
        self.transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        view = self.tail + data
        k = view.count(_TOKEN) - self.tail.count(_TOKEN)
        self.tail = view[-(len(_END) - 1) :]
        st = self.stats
        if k:
            if st["measuring"]:
                st["tokens"] += k
                if self.seen == 0:
                    st["ttft"].append(now - self.t_sent)
                else:
                    st["itl"].append(now - self.t_prev)
                st["itl"].extend([0.0] * (k - 1))
            self.seen += k
            self.t_prev = now
        if view.endswith(_END):
            if self.seen != self.max_tokens:
                st["errors"] += 1
            self._send()

    def connection_lost(self, exc: Exception | None) -> None:
        self.stats["errors"] += 1


async def _drive(host: str, port: int, args: argparse.Namespace, sim_pid: int) -> dict:
    body = b'{"model":"m","stream":true,"max_tokens":%d,"messages":[{"role":"user","content":"hello there"}]}' % (
        args.max_tokens
    )
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b" % (
        len(body), body
    )  # fmt: skip
    stats: dict = {"tokens": 0, "ttft": [], "itl": [], "errors": 0, "measuring": False}
    loop = asyncio.get_running_loop()
    transports = []
    start = loop.time()
    step = max(args.itl_ms, 1.0) / 1000 / args.streams
    for i in range(args.streams):  # spread the starts over one ITL so streams do not all tick together
        await asyncio.sleep(start + i * step - loop.time())
        tr, _ = await loop.create_connection(lambda: _Stream(request, stats, args.max_tokens), host, port)
        transports.append(tr)
    await asyncio.sleep(args.warmup)
    stats["measuring"] = True
    cpu0, own0, t0 = _sim_cpu_s(sim_pid), time.process_time(), time.perf_counter()
    await asyncio.sleep(args.seconds)
    cpu1, own1, t1 = _sim_cpu_s(sim_pid), time.process_time(), time.perf_counter()
    stats["measuring"] = False
    errors = stats["errors"]
    for tr in transports:
        tr.close()
    wall, tokens = t1 - t0, stats["tokens"]
    return {
        "streams": args.streams,
        "offered_tok_s": args.streams / (args.itl_ms / 1000) if args.itl_ms and not args.preset else float("nan"),
        "tok_s": tokens / wall,
        "sim_cores": (cpu1 - cpu0) / wall,
        "sim_cpu_s_per_1k": (cpu1 - cpu0) / tokens * 1000 if tokens else float("nan"),
        "ttft_p50_ms": statistics.median(stats["ttft"]) * 1000 if stats["ttft"] else float("nan"),
        "itl_p50_ms": statistics.median(stats["itl"]) * 1000 if stats["itl"] else float("nan"),
        "client_cores": (own1 - own0) / wall,
        "errors": errors,
    }


def _client(host: str, port: int, args: argparse.Namespace, sim_pid: int, out: mp.Queue) -> None:
    out.put(asyncio.run(_drive(host, port, args, sim_pid)))


def _sim_config(ns: argparse.Namespace):  # noqa: ANN202 - SimConfig, imported lazily
    from llmload.sim import SimConfig, preset_params

    if not ns.preset:
        return SimConfig(port=0, ttft_ms=ns.ttft_ms, itl_ms=ns.itl_ms)
    overrides = {"time_scale": ns.time_scale}
    if ns.max_num_seqs:
        overrides["max_num_seqs"] = ns.max_num_seqs
    return SimConfig(port=0, preset=ns.preset, engine=preset_params(ns.preset, **overrides))


def main(argv: list[str] | None = None) -> int:
    from llmload.sim import start_sim_process

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--streams", type=int, nargs="+", default=[50, 200, 500])
    p.add_argument("--ttft-ms", type=float, default=0.0)
    p.add_argument("--itl-ms", type=float, default=2.0)
    p.add_argument("--max-tokens", type=int, default=200)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--warmup", type=float, default=2.0)
    p.add_argument("--preset", default="", help="use the engine model with this preset (default: fixed latency)")
    p.add_argument("--time-scale", type=float, default=0.05, help="engine model: step duration factor")
    p.add_argument("--max-num-seqs", type=int, default=0, help="engine model: batch cap (default: the preset's)")
    ns = p.parse_args(argv)
    print(f"sim: {_sim_config(ns).describe()}; {ns.max_tokens} tokens/request; {os.cpu_count()} CPUs")
    print(f"{'streams':>7} {'offered/s':>10} {'tokens/s':>10} {'sim cores':>9} {'sim CPU s/1k tok':>16} "
          f"{'TTFT p50 ms':>11} {'ITL p50 ms':>10} {'client cores':>12} {'errors':>6}")  # fmt: skip
    ctx = mp.get_context("spawn")
    for n in ns.streams:
        ns.streams = n
        with start_sim_process(_sim_config(ns)) as sim:
            q: mp.Queue = ctx.Queue()
            client = ctx.Process(target=_client, args=(sim.host, sim.port, ns, sim.pid, q))
            client.start()
            r = q.get(timeout=ns.warmup + ns.seconds + 60)
            client.join(10)
        print(f"{r['streams']:>7} {r['offered_tok_s']:>10.0f} {r['tok_s']:>10.0f} {r['sim_cores']:>9.2f} "
              f"{r['sim_cpu_s_per_1k']:>16.4f} {r['ttft_p50_ms']:>11.2f} {r['itl_p50_ms']:>10.3f} "
              f"{r['client_cores']:>12.2f} {r['errors']:>6}",
              flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
