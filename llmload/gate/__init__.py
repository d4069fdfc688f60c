"""``llmload gate BASELINE CANDIDATE``: PASS / FAIL / INCONCLUSIVE for a CI job, from the percentiles' intervals.

* :mod:`.limits` — ``--max-regression`` (metric → allowed regression) and its defaults;
* :mod:`.figures` — what is compared, per class and overall: a run's percentiles with their 95 %
  intervals, or a ``--repeat`` aggregate's median and spread when the summary has one;
* :mod:`.decide` — comparability, and each metric's decision (pure);
* :mod:`.output` — the console table, JSON (``llmload.gate/1``) and JUnit XML;
* :mod:`.gate_command` — the command line, :func:`~llmload.gate.gate_command.gate_main` (exit codes 0 pass, 1 fail, 2 bad input, 3 inconclusive).

docs/ci.md describes the rules and the defaults.
"""

from llmload.gate.decide import Check, GateResult, decide
from llmload.gate.limits import DEFAULT_LIMITS, parse_limits

__all__ = ["DEFAULT_LIMITS", "Check", "GateResult", "decide", "parse_limits"]
