"""Write a synthetic Mooncake-format trace (the example shipped beside this script).

    .venv/bin/python examples/traces/make_example.py                      # the shipped example
    .venv/bin/python examples/traces/make_example.py --entries 1000 --rate 5 --seed 3 -o my-trace.jsonl

The format and the generator's model (Poisson arrivals, shared system prompts, follow-up
turns re-sending earlier blocks) are described in ``llmload/workload/traces.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from llmload.workload.traces import generate_trace, load_trace, trace_lines

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE / "mooncake-example.jsonl"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=EXAMPLE, help=f"file to write (default {EXAMPLE.name})")
    parser.add_argument("--entries", type=int, default=200, help="requests in the trace (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generator (default 0)")
    parser.add_argument("--rate", type=float, default=2.0, help="mean arrivals per second (default 2)")
    parser.add_argument("--system-prompts", type=int, default=4, help="shared system prompts (default 4)")
    parser.add_argument("--followup-share", type=float, default=0.35, help="share of follow-up turns (default 0.35)")
    args = parser.parse_args(argv)
    try:
        entries = generate_trace(
            args.entries,
            args.seed,
            rate_per_s=args.rate,
            system_prompts=args.system_prompts,
            followup_share=args.followup_share,
        )
    except ValueError as e:
        print(f"make_example: {e}", file=sys.stderr)
        return 2
    args.output.write_bytes(trace_lines(entries))
    trace = load_trace(args.output)
    print(
        f"wrote {args.output}: {len(trace)} requests over {trace.duration_ms / 1000:.1f} s, "
        f"{100 * trace.block_reuse():.0f} % of listed blocks reused"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
