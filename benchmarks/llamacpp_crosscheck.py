"""llmload's client-side timings next to llama-server's own, at 1 and 8 users (docs/real_engines.md).

Starts llama.cpp's llama-server (built by ``make llama-server``; ``--threads 1 --parallel 8``)
with a random-weight GGUF made by tests/engines/make_gguf.py (``--model 88m`` by default:
real per-token cost; ``tiny``: HTTP and the client dominate), runs ``llmload run`` for
``--seconds`` at each ``--users`` count (50-token prompts +-10, 64 output tokens), and prints,
per user count, medians of both sides for the requests that finished:

* client TTFT vs the server's ``prompt_ms`` (from each request's own stream); their difference
  = queue + HTTP + network + tokenizing: the median and the smallest of the per-request
  differences;
* client TPOT and ITL p50 vs the server's ``predicted_per_token_ms`` (ratios).

Usage: ``.venv/bin/python benchmarks/llamacpp_crosscheck.py [--model 88m] [--users 1 8] [--seconds 20]``.
Run it alone: the figures move with anything else on the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import locust  # noqa: E402, F401  (gevent monkey-patching first, as in a Locust process)

from tests.engines.crosscheck import crosscheck  # noqa: E402
from tests.engines.llama_server import llama_server, missing_reason  # noqa: E402
from tests.engines.make_gguf import SIZES, ensure_model  # noqa: E402


def _f(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(SIZES), default="88m")
    ap.add_argument("--users", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--output-tokens", type=int, default=64)
    args = ap.parse_args()
    reason = missing_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="llamacpp-crosscheck-"))
    rows = []
    with llama_server(ensure_model(args.model), alias=args.model, log_dir=work) as srv:
        for users in args.users:
            rows.append(crosscheck(srv, work / f"u{users}", users, args.seconds, output_tokens=args.output_tokens))
    print(f"llama-server b11434, model {args.model}, --threads 1 --parallel 8; {args.seconds} s per row; "
          f"prompts 40-60 tokens, {args.output_tokens} out; medians in ms")  # fmt: skip
    head = ("users", "ok", "err", "TTFT", "prompt_ms", "TTFT-prompt", "min", "TPOT", "ITL p50", "srv/token",
            "TPOT/srv", "ITL/srv", "reconnects", "saturated")  # fmt: skip
    print(" ".join(f"{h:>11}" for h in head))
    for r in rows:
        cells = (r["users"], r["requests_ok"], r["errors"], _f(r["client_ttft_p50"]), _f(r["server_prompt_ms_p50"]),
                 _f(r["ttft_minus_prompt_p50"]), _f(r["ttft_minus_prompt_min"]), _f(r["client_tpot_p50"]),
                 _f(r["client_itl_p50"]), _f(r["server_per_token_p50"]), _f(r.get("tpot_ratio"), ".3f"),
                 _f(r.get("itl_ratio"), ".3f"), r["reconnects"], r["client_saturated"])  # fmt: skip
        print(" ".join(f"{c!s:>11}" for c in cells))
        if r["errors"]:
            print(f"  errors: {r['errors_by_kind']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
