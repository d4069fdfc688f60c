from __future__ import annotations

import time

import gevent

from llmload.metrics.selfcheck import ProcessMonitor


def test_busy_process_reads_high_cpu_and_a_blocked_loop_reads_lag():
    m = ProcessMonitor()
    m.start()
    try:
        gevent.sleep(0.25)
        m.sample()  # start a clean interval
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.3:  # burn CPU without yielding: the loop cannot wake the probe
            pass
        gevent.sleep(0.15)
        cpu, lag = m.sample()
        assert cpu > 0.4
        assert lag > 0.1
        gevent.sleep(0.35)
        cpu, lag = m.sample()
        assert cpu < 0.5
        assert lag < 0.05
    finally:
        m.stop()
