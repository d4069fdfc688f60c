"""What polling engine and GPU metrics costs the load generator's event loop: µs of CPU per poll.

Run: ``.venv/bin/python benchmarks/collect_cost.py [--repeat N]``.

A poll runs on the process that summarises, which in a standalone run also drives the
users: the time a poll spends parsing is time the loop does not read streams. Measured
per source page, with no network (the page is already in memory):

* **parse** — :func:`llmload.collect.exposition.parse_exposition` with the names the
  collector reads (regex per line, other names skipped);
* **read** — engine detection and mapping (``read_engine``) or the GPU mapping (``read_gpus``);
* **poll** — both, plus adding the reading to a timeline (what one source costs a poll);
* **all names** — the same parser keeping every sample;
* **prometheus_client** — ``prometheus_client.parser.text_string_to_metric_families`` over
  the whole page, the reference parser, for comparison.

Pages: the recorded vLLM V1 page (one engine, ~40 kB, most of it process/GC/HTTP series),
the same with 8 data-parallel engines (``engine="0".."7"``), dcgm-exporter with 8 H200s,
and the simulator's page. Medians over ``--repeat`` calls.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from llmload.collect.engines import ENGINE_NAMES, read_engine
from llmload.collect.exposition import parse_exposition
from llmload.collect.gpus import GPU_NAMES, read_gpus
from llmload.collect.timeline import Timeline

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "metrics"
NAMES = ENGINE_NAMES | GPU_NAMES


def vllm_data_parallel(text: str, engines: int) -> str:
    """The vLLM page with every ``vllm:*`` series repeated for ``engines`` engines."""
    out = []
    for line in text.splitlines():
        if line.startswith("vllm:") and 'engine="0"' in line:
            out.extend(line.replace('engine="0"', f'engine="{e}"') for e in range(engines))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def dcgm_gpus(text: str, gpus: int) -> str:
    """The 2-GPU dcgm page grown to ``gpus`` GPUs (new indexes and UUIDs)."""
    out = []
    for line in text.splitlines():
        m = re.match(r'^(DCGM_\w+)\{gpu="0",UUID="([^"]+)"(.*)$', line)
        if m:
            out.extend(f'{m.group(1)}{{gpu="{g}",UUID="GPU-bench-{g}"{m.group(3)}' for g in range(gpus))
        elif not re.match(r'^DCGM_\w+\{gpu="1"', line):
            out.append(line)
    return "\n".join(out) + "\n"


def median_us(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t)
    return statistics.median(times) / 1000.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=300)
    args = ap.parse_args()
    vllm = (FIXTURES / "vllm-0.10-v1_llama-3.1-8b_t1.txt").read_text()
    pages = {
        "vLLM V1, 1 engine": (vllm, "engine"),
        "vLLM V1, 8 DP engines": (vllm_data_parallel(vllm, 8), "engine"),
        "dcgm-exporter, 8 H200": (
            dcgm_gpus((FIXTURES / "dcgm-exporter-4.1_h200x2_Hostname-label.txt").read_text(), 8),
            "gpu",
        ),
        "simulator (engine + GPU)": ((FIXTURES / "llmload-sim_healthy_8-users.txt").read_text(), "both"),
    }
    print(
        f"{'page':26} {'kB':>6} {'parse µs':>9} {'read µs':>8} {'poll µs':>8} {'all names µs':>13} {'prometheus_client µs':>21}"
    )
    for name, (text, role) in pages.items():
        samples = parse_exposition(text, NAMES)

        def read(s=samples, role=role):
            e = read_engine(s) if role in ("engine", "both") else None
            g = read_gpus(s) if role in ("gpu", "both") else {}
            return e, g

        tl = Timeline(0.0)

        def poll(text=text, role=role, tl=tl):
            s = parse_exposition(text, NAMES)
            e = read_engine(s) if role in ("engine", "both") else None
            g = read_gpus(s) if role in ("gpu", "both") else {}
            tl.add(float(len(tl)), {"u": e} if e is not None else {}, g)

        parse = median_us(lambda text=text: parse_exposition(text, NAMES), args.repeat)
        mapping = median_us(read, args.repeat)
        whole = median_us(poll, args.repeat)
        unfiltered = median_us(lambda text=text: parse_exposition(text), max(20, args.repeat // 5))
        ref = median_us(
            lambda text=text: [f.samples for f in text_string_to_metric_families(text)], max(20, args.repeat // 10)
        )
        print(
            f"{name:26} {len(text) / 1024:6.1f} {parse:9.0f} {mapping:8.0f} {whole:8.0f} {unfiltered:13.0f} {ref:21.0f}"
        )


if __name__ == "__main__":
    main()
