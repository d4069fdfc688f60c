"""Per-request cost of the workload: ``WorkloadSampler.next()`` and a 2000-token synthetic prompt.

Run: ``.venv/bin/python benchmarks/workload_cost.py [--number N]``. Prints µs per call (best
of 5 repeats) and MISS when over the target: the sampler runs once per request on the user's
greenlet, before the request is sent, so it must stay far below a request's time (target
100 µs each, on a busy 2-core machine). These were unit-test asserts before; speed targets
live in benchmarks/ (CONVENTIONS.md), unit tests assert behaviour only.
"""

from __future__ import annotations

import argparse
import random
import timeit

from llmload.workload import WorkloadSampler, load_profile
from llmload.workload.prompts import synthetic_prompt

TARGET_US = 100.0


def per_call_us(func, number: int) -> float:
    return min(timeit.repeat(func, number=number, repeat=5)) / number * 1e6


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--number", type=int, default=5000, help="calls per repeat (default %(default)s)")
    ns = p.parse_args()
    sampler = WorkloadSampler(load_profile("default"), seed=1, user_index=0)
    sampler.next()
    rng = random.Random(1)
    synthetic_prompt(rng, 2000)  # builds the corpus once
    cases = [
        ("WorkloadSampler.next(), default profile", per_call_us(sampler.next, ns.number)),
        ("synthetic_prompt(2000 tokens)", per_call_us(lambda: synthetic_prompt(rng, 2000), max(1, ns.number // 2))),
    ]
    for label, us in cases:
        flag = "" if us <= TARGET_US else f"  MISS (target <= {TARGET_US:g} µs)"
        print(f"{label:<46} {us:8.2f} µs per call{flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
