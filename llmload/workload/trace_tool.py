"""``llmload trace``: look at, generate and convert request traces for ``llmload run --trace``.

    llmload trace info FILE.jsonl                       # entries, span, rate, lengths, block reuse
    llmload trace generate -o t.jsonl --entries 500 --rate 4 --seed 1
    llmload trace convert --from burstgpt BurstGPT_1.csv -o burstgpt.jsonl [--model GPT-4] [--limit N]
    llmload trace convert --from azure AzureLLMInferenceTrace_conv.csv -o azure-conv.jsonl
    llmload trace rebase clock.jsonl -o t.jsonl         # timestamps from the first entry's (a clock's: epoch ms)
    llmload trace from-records records.jsonl [records.worker1.jsonl ...] -o t.jsonl [--class agent]

Formats: :mod:`llmload.workload.traces` (Mooncake, what ``--trace`` reads; its sessions:
:mod:`llmload.workload.trace_sessions`), :mod:`llmload.workload.trace_formats` (what ``convert``
reads) and :mod:`llmload.workload.trace_records` (``from-records``: a run's ``--records-jsonl``,
its conversation and agent sessions kept). Every problem is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

from llmload.errors import ProfileError
from llmload.workload.trace_formats import FORMATS, convert_file
from llmload.workload.trace_records import read_records, records_to_trace
from llmload.workload.traces import generate_trace, load_trace, trace_lines

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="llmload trace", description="Request traces for llmload run --trace.")
    sub = p.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="what a Mooncake-format trace holds")
    info.add_argument("path", type=Path)
    gen = sub.add_parser("generate", help="write a synthetic chat-service trace (shared system prompts, follow-ups)")
    gen.add_argument("-o", "--output", type=Path, required=True, help="file to write (JSON Lines)")
    gen.add_argument("--entries", type=int, default=200, help="requests in the trace (default 200)")
    gen.add_argument("--rate", type=float, default=2.0, help="mean arrivals per second (default 2)")
    gen.add_argument("--seed", type=int, default=0, help="seed of the generator (default 0)")
    gen.add_argument("--system-prompts", type=int, default=4, help="shared system prompts (default 4)")
    gen.add_argument("--followup-share", type=float, default=0.35, help="share of follow-up turns (default 0.35)")
    conv = sub.add_parser("convert", help="convert a published trace (CSV) to the Mooncake format")
    conv.add_argument("path", type=Path)
    conv.add_argument("--from", dest="fmt", required=True, choices=sorted(FORMATS), help="the input's format")
    conv.add_argument("-o", "--output", type=Path, required=True, help="file to write (JSON Lines)")
    conv.add_argument("--model", default=None, help="BurstGPT: keep only this Model column value (e.g. GPT-4)")
    conv.add_argument("--limit", type=int, default=None, help="keep the first N requests")
    reb = sub.add_parser("rebase", help="make timestamps milliseconds from the first entry (a trace of clock times)")
    reb.add_argument("path", type=Path)
    reb.add_argument("-o", "--output", type=Path, required=True, help="file to write (JSON Lines)")
    rec = sub.add_parser("from-records", help="a run's --records-jsonl as a trace (its sessions and their turns kept)")
    rec.add_argument("paths", type=Path, nargs="+", help="the run's records (a worker's too: records.worker<N>.jsonl)")
    rec.add_argument("-o", "--output", type=Path, required=True, help="file to write (JSON Lines)")
    rec.add_argument("--class", dest="classes", action="append", default=[], help="keep this class's requests (repeat)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "info":
            return _info(args.path)
        if args.command == "generate":
            _check_generate(args)
            try:
                entries = generate_trace(args.entries, args.seed, rate_per_s=args.rate,
                                         system_prompts=args.system_prompts, followup_share=args.followup_share)  # fmt: skip
            except ValueError as e:
                raise ProfileError(str(e)) from None
            _write(args.output, trace_lines(entries))
            return _info(args.output)
        if args.command == "from-records":
            got = records_to_trace(read_records(args.paths), args.classes)
            _write(args.output, trace_lines(got.entries))
            sys.stdout.write(f"{len(got.entries)} requests: {got.sessions} sessions ({len(got.entries) - got.singles} turns), "
                             f"{got.singles} single requests; {got.skipped} records left out (another class, or "
                             "a session's turns after a missing one)\n")  # fmt: skip
            return _info(args.output)
        if args.command == "rebase":
            _write(args.output, trace_lines(list(load_trace(args.path, rebase=True).entries)))
            return _info(args.output)
        if args.limit is not None and args.limit < 1:
            raise ProfileError(f"--limit {args.limit}: must be >= 1")
        converted = convert_file(args.path, args.fmt, args.model, args.limit)
        _write(args.output, trace_lines(converted.entries))
        sys.stdout.write(f"converted {len(converted.entries)} requests ({converted.skipped} rows skipped: failed "
                         "requests or another model)\n")  # fmt: skip
        return _info(args.output)
    except ProfileError as e:
        sys.stderr.write(f"llmload trace: error: {e}\n")
        return 2


def _check_generate(args: argparse.Namespace) -> None:
    """``generate``'s flags, each named in its own error (not the generator's parameter names)."""
    if args.entries < 1:
        raise ProfileError(f"--entries {args.entries}: must be >= 1 (requests in the trace)")
    if not (math.isfinite(args.rate) and args.rate > 0):
        raise ProfileError(f"--rate {args.rate:g}: must be a number > 0 (mean arrivals per second)")
    if args.system_prompts < 1:
        raise ProfileError(f"--system-prompts {args.system_prompts}: must be >= 1")
    if not 0 <= args.followup_share <= 1:
        raise ProfileError(f"--followup-share {args.followup_share:g}: must be a share in [0, 1]")


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except OSError as e:
        raise ProfileError(f"cannot write '{path}' ({e.strerror or e}); check the folder") from None


def _info(path: Path) -> int:
    trace = load_trace(path)
    n = len(trace)
    span_s = trace.duration_ms / 1000.0
    ins = [e.input_length for e in trace.entries]
    outs = [e.output_length for e in trace.entries]
    rate = f"{n / span_s:.3g} req/s" if span_s > 0 else "all at once"
    listed = sum(1 for e in trace.entries if e.hash_ids)
    sys.stdout.write(
        f"{path}: {n} requests over {span_s:.1f} s ({rate}; at --trace-speedup X: X times that)\n"
        f"  input tokens: mean {statistics.fmean(ins):.0f}, median {statistics.median(ins):.0f}, max {max(ins)}\n"
        f"  output tokens: mean {statistics.fmean(outs):.0f}, median {statistics.median(outs):.0f}, max {max(outs)}\n"
        f"  hash_ids: on {listed} of {n} entries, {trace.block_reuse():.0%} of listed blocks repeat an earlier one\n"
    )
    if trace.sessions:
        tools = sum(1 for e in trace.entries if e.turn is not None and e.turn.tool_results)
        sys.stdout.write(f"  sessions: {len(trace.sessions)} ({n - len(trace.arrivals) + len(trace.sessions)} turns, "
                         f"{tools} of them sending tool results); a replay sends each session's turns in order, each "
                         "after the previous answer and its wait_ms\n")  # fmt: skip
    return 0
