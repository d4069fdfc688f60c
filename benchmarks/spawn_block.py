"""How long a Locust worker's event loop stays blocked by one spawn message, with and without
llmload's workaround (:mod:`llmload.runtime.locust_workarounds`).

Run: ``.venv/bin/python benchmarks/spawn_block.py [--messages N]``.

A real Locust master and worker in this process, talking over ZeroMQ on 127.0.0.1; the
master's options hold Locust's and llmload's flags (what ``llmload run --processes N`` sends).
A probe greenlet sleeps 1 ms in a loop and keeps its worst wake-up delay: that is how long no
other greenlet (a stream's read, the open-loop dispatcher) could run. The master then changes
the user count ``--messages`` times (one spawn message each, as every second of a ramp or
every ladder step does), first with Locust's own ``default_args_dict`` and then with the cached
one, and prints the worst and median block per message for both in one run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gevent
from locust import User, argument_parser, constant, events, task
from locust.env import Environment

from llmload.config import add_arguments
from llmload.runtime.locust_workarounds import cache_default_args

PROBE_S = 0.001


class Idle(User):
    wait_time = constant(60)

    @task
    def nothing(self) -> None:
        pass


def options() -> argparse.Namespace:
    parser = argument_parser.get_parser()
    add_arguments(parser)
    return parser.parse_args(["--headless", "--processes", "1", "--host", "http://127.0.0.1:9"])


class Probe:
    def __init__(self) -> None:
        self.worst = 0.0
        self._g = gevent.spawn(self._run)

    def _run(self) -> None:
        while True:
            t0 = time.perf_counter()
            gevent.sleep(PROBE_S)
            self.worst = max(self.worst, time.perf_counter() - t0 - PROBE_S)

    def take(self) -> float:
        worst, self.worst = self.worst, 0.0
        return worst

    def stop(self) -> None:
        self._g.kill()


def blocks(messages: int) -> list[float]:
    """The worker's worst loop block (s) around each of ``messages`` spawn messages."""
    opts = options()
    master_env = Environment(user_classes=[Idle], events=events, parsed_options=opts)
    master = master_env.create_master_runner("127.0.0.1", 0)
    worker_env = Environment(user_classes=[Idle], parsed_options=opts)
    worker = worker_env.create_worker_runner("127.0.0.1", master.server.port)
    try:
        deadline = time.monotonic() + 10
        while master.worker_count < 1:
            if time.monotonic() > deadline:
                raise SystemExit("the worker did not connect in 10 s")
            gevent.sleep(0.05)
        probe = Probe()
        out = []
        for i in range(messages):
            gevent.sleep(0.2)
            probe.take()
            master.start(2 + i % 2, spawn_rate=100)  # one spawn message: 2 or 3 users, all at once
            gevent.sleep(0.3)
            out.append(probe.take())
        probe.stop()
        return out
    finally:
        master.quit()
        worker.quit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=10)
    args = ap.parse_args()
    keys = len(vars(options()))
    original = argument_parser.default_args_dict
    print(f"spawn message with {keys} options (Locust's and llmload's); worker loop block per message, ms")
    try:
        for name, fn in (("Locust's default_args_dict", original), ("cached (llmload)", cache_default_args(original))):
            argument_parser.default_args_dict = fn
            ms = [b * 1000 for b in blocks(args.messages)]
            print(f"  {name:28s} median {statistics.median(ms):7.1f}   worst {max(ms):7.1f}   ({len(ms)} messages)")
    finally:
        argument_parser.default_args_dict = original


if __name__ == "__main__":
    main()
