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
        busy_cpu, lag = m.sample()
        assert lag > 0.1  # the probe could not run while the loop was blocked
        gevent.sleep(0.35)
        idle_cpu, idle_lag = m.sample()
        # Ratios, not absolute CPU shares: the machine may be shared with other work.
        assert busy_cpu > idle_cpu + 0.1
        assert idle_lag < lag
    finally:
        m.stop()
