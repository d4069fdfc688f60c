"""Benchmark-only: time every garbage collection of a process, for ``benchmarks/sessions_scale.py --split``.

Put on ``PYTHONPATH`` with ``LLMLOAD_BENCH_GCPROBE=<dir>`` set, every Python process started
(llmload, its workers, the simulator) appends its collections (generation, pause in seconds,
the thread's CPU seconds in it, ``time.time()`` at the end) and writes them at exit to ``<dir>/gc-<pid>.json`` with its
command line. No effect without the variable.

``LLMLOAD_BENCH_SIM_FREEZE=<seconds>`` (``sessions_scale.py --sim-freeze``, an experiment): the
simulator moves every object alive to the permanent generation (``gc.freeze()``) that often,
from a thread, so that its full collections visit only the last seconds' objects: the TTFT
error without the simulator's collections (cyclic garbage among frozen objects then waits:
fine for a benchmark run, not for a server).
"""

import os

if os.environ.get("LLMLOAD_BENCH_GCPROBE"):
    import atexit
    import gc
    import json
    import time

    _start = [0.0, 0.0]
    _pauses: list = []

    def _cb(phase: str, info: dict) -> None:
        if phase == "start":
            _start[0], _start[1] = time.perf_counter(), time.thread_time()
        else:
            wall, cpu = time.perf_counter() - _start[0], time.thread_time() - _start[1]
            _pauses.append((info["generation"], wall, cpu, time.time()))

    gc.callbacks.append(_cb)

    def _dump() -> None:
        try:
            with open("/proc/self/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            out = os.path.join(os.environ["LLMLOAD_BENCH_GCPROBE"], f"gc-{os.getpid()}.json")
            with open(out, "w") as f:
                json.dump({"cmd": cmd, "pauses": _pauses}, f)
        except OSError:
            pass

    atexit.register(_dump)

    _every = float(os.environ.get("LLMLOAD_BENCH_SIM_FREEZE") or 0)
    if _every > 0:
        with open("/proc/self/cmdline", "rb") as _f:
            _is_sim = b"llmload.sim" in _f.read()
        if _is_sim:
            import threading

            def _freezer() -> None:
                while True:
                    time.sleep(_every)
                    gc.freeze()

            threading.Thread(target=_freezer, name="bench-sim-freeze", daemon=True).start()
