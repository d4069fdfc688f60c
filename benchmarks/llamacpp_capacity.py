"""Fit on llama.cpp, predict another load, measure it: the errors (issue 25, "On llama.cpp"; docs/capacity.md).

Starts llama.cpp's llama-server (built by ``make llama-server``; the 88 M random-weight GGUF of
tests/engines/make_gguf.py, ``--threads 1 --parallel 4 --no-cache-prompt``) and runs
tests/engines/capacity_loop.py's loop with steps of ``--step-time`` seconds (default 15; the test,
tests/integration/test_llamacpp_capacity.py, runs 8 s steps and bounds the errors loosely): a ladder
1,2,6 of 32-320 prompt / 8-24 output tokens measured with the engine's gauges, ``llmload fit``, a
ladder 1,3,6 of 128-256 / 24-40 tokens measured, ``llmload predict --check`` of it. Prints the fitted
parameters and, per step, the measured vs predicted TTFT and TPOT p50 and their errors.

Usage: ``.venv/bin/python benchmarks/llamacpp_capacity.py [--step-time 15] [--warmup 3]``
(~2 min at 15 s steps). Run it alone: the figures move with anything else on the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import locust  # noqa: E402, F401  (gevent monkey-patching first, as in a Locust process)

from tests.engines.capacity_loop import fit_predict_measure  # noqa: E402
from tests.engines.llama_server import llama_server, missing_reason  # noqa: E402
from tests.engines.make_gguf import ensure_model  # noqa: E402
from tests.integration.test_llamacpp_capacity import FIT, PREDICTED, SLOTS  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step-time", type=int, default=15, help="seconds per ladder step (default 15)")
    ap.add_argument("--warmup", type=int, default=3, help="unmeasured seconds at each step's start (default 3)")
    args = ap.parse_args()
    reason = missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="llamacpp-capacity-"))
    with llama_server(ensure_model("88m"), alias="m88", parallel=SLOTS, log_dir=work,
                      extra=("--no-cache-prompt",)) as srv:  # fmt: skip
        loop = fit_predict_measure(srv, work, FIT, PREDICTED, step_s=args.step_time, warmup_s=args.warmup)
    print(f"llama-server b11434, 88m, --threads 1 --parallel {SLOTS} --no-cache-prompt; {args.step_time} s steps "
          f"({args.warmup} s warm-up); files: {work}")  # fmt: skip
    print(loop.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
