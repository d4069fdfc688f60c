"""The LLM tab's live charts in a real browser, while a ladder ramps 1 → 20 users against ``batch-starved``.

``llmload run --ladder 1,20`` in web UI mode with engine and GPU collection from the simulator; the
test presses Start in the form, opens the LLM tab and waits for the ladder to end by itself. Then it
reads the chart data route (``/llmload/series``), the chart frame's DOM and the tab's table, and
takes a screenshot. With 4 sequences at most, 20 users queue: TTFT p50 must end far above the
1-user step's, with the engine's queue above zero, the baseline and its limit drawn.

The test takes ~37 s (two 10 s steps, 2 s warm-up each). The live baseline needs 5 successes in the
1-user step's steady window: at 8 output tokens a request takes 0.6-1.2 s there (the preset's TTFT
and 57 ms TPOT), so its 8 steady seconds hold ~9 (16 tokens and 6 s held 4-5: a coin flip that once
failed CI). The live window of the last 30 s then holds both steps.
``LLMLOAD_DOCS_SCREENSHOTS=1`` also writes the screenshot to ``docs/web_ui_charts.png`` (docs/live.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from tests.helpers.harness import ROOT
from tests.integration.test_web_ui import (
    CHROMEDRIVER,
    CHROMIUM,
    chrome,
    free_port,
    get_json,
    number,
    read_table,
    stop_process,
    unstale,
    wait_for_http,
)

pytestmark = pytest.mark.integration

STEP_S, WARMUP_S = 10, 2
DOCS_PNG = ROOT / "docs" / "web_ui_charts.png"


def text_of(driver, css: str) -> str:
    """An element's text, read again if the page redrew it meanwhile (:func:`unstale`)."""
    from selenium.webdriver.common.by import By

    return unstale(lambda: driver.find_element(By.CSS_SELECTOR, css).text)


def last_before(t: list[float], values: list, at: float):
    """The last non-null value sampled before ``at``."""
    seen = [v for ti, v in zip(t, values, strict=True) if ti < at and v is not None]
    return seen[-1] if seen else None


@pytest.mark.slow  # over 20 s
@pytest.mark.skipif(not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)), reason="chromium not installed")
def test_charts_move_with_load_in_the_llm_tab(sim, tmp_path):
    pytest.importorskip("selenium")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    host = sim("--preset", "batch-starved")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "llmload.log"
    cmd = [sys.executable, "-m", "llmload", "run", "--web-host", "127.0.0.1", "--web-port", str(port),
           "--host", host, "--max-tokens-cap", "8", "--ladder", "1,20", "--step-time", f"{STEP_S}s",
           "--step-warmup", f"{WARMUP_S}s", "--engine-metrics", host, "--gpu-metrics", host,
           "--collect-interval", "1s"]  # fmt: skip
    with log.open("w") as out:
        env = {**os.environ, "LLMLOAD_EXPORTER_PORT": "0"}
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    driver = None
    try:
        wait_for_http(base + "/", 30, proc, log)
        driver = chrome(tmp_path)
        driver.set_window_size(1600, 1560)
        driver.get(base + "/")
        wait = WebDriverWait(driver, 20)
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "form button[type='submit']")).click()
        wait.until(lambda d: d.find_element(By.XPATH, "//button[@role='tab'][normalize-space(.)='LLM']")).click()
        frame = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#llmload-charts iframe"))

        # The ladder runs 2 steps and stops by itself; the sampler takes one more sample after the stop.
        def ended(_):
            d = get_json(base + "/llmload/series")
            return d if d["state"] == "stopped" and len(d["steps"]) == 2 and d["steps"][1]["ended_at"] else None

        WebDriverWait(driver, 2 * STEP_S + 30, poll_frequency=1).until(ended)
        time.sleep(2.5)  # the sampler's last sample, after the stop (every 2 s)
        data = get_json(base + "/llmload/series")
        t, col = data["t"], data["columns"]
        step0, step1 = data["steps"]
        assert (step0["users"], step1["users"]) == (1, 20)
        assert col["users"][0] == 1 and max(col["users"]) == 20 and col["users"][-1] == 0  # 0: stopped
        before = last_before(t, col["ttft_p50_ms"], step1["started_at"])  # 1 user, end of its step
        after = last_before(t, col["ttft_p50_ms"], step1["ended_at"])  # 20 users, end of theirs
        assert before is not None and after is not None, col["ttft_p50_ms"]
        assert after > 3 * before, (before, after)  # queued behind max-num-seqs 4
        assert max(v for v in col["in_flight"] if v is not None) > 4
        assert max(v for v in col["waiting"] if v is not None) > 0  # the engine's queue, collected
        assert any(v is not None for v in col["kv_cache_usage"]) and any(v is not None for v in col["utilization"])
        assert data["baseline"]["ttft_p50_ms"] == pytest.approx(before, rel=0.5) and data["limit_factor"] == 1.5
        assert all(v == 0 for v in col["errors_per_s"] if v is not None)

        # The tab's table, renamed columns.
        headers = [th.text.strip() for th in driver.find_elements(By.CSS_SELECTOR, "table thead th")]
        assert "OK req/s" in headers and "Err/s" in headers and "Req/s" not in headers
        overall = read_table(driver)["Overall"]
        assert number(overall["Err/s"]) == 0

        # The frame: every chart drawn, engine and GPU ones too (collection is on), "now" values from the data.
        assert frame.size["height"] > 600 and frame.is_displayed()
        driver.switch_to.frame(frame)
        last = [v for v in col["ttft_p50_ms"] if v is not None][-1]

        def draws_the_last_sample(d):  # at the frame's next poll (every 2 s)
            now = text_of(d, "#chart-ttft b[data-key='ttft_p50_ms']")
            return number(now.replace(",", "")) == pytest.approx(last, rel=0.02)

        wait.until(draws_the_last_sample)
        shown = [
            s.get_attribute("id") for s in driver.find_elements(By.CSS_SELECTOR, "section.chart") if s.is_displayed()
        ]
        assert shown == [
            f"chart-{c}" for c in ("ttft", "tpot", "tokens", "load", "rate", "errors", "queue", "kv", "gpu")
        ]
        assert len(driver.find_elements(By.CSS_SELECTOR, "section.chart canvas")) >= len(shown)
        now = text_of(driver, "#chart-ttft b[data-key='ttft_p50_ms']")
        assert number(now.replace(",", "")) == pytest.approx(last, rel=0.02), (now, last)
        # nothing reasons here: no TTFO line (tests/unit/web: its values where requests reason)
        assert not driver.find_elements(By.CSS_SELECTOR, "#chart-ttft b[data-key='ttfo_p50_ms']")
        legend = text_of(driver, "#chart-ttft .u-legend")
        assert "TTFO" not in legend and "baseline p50" in legend and "limit 1.5× baseline" in legend
        assert driver.find_element(By.ID, "class").get_attribute("value") == "Overall"
        assert driver.execute_script("return window.llmloadErrors") == []
        driver.switch_to.default_content()

        shot = tmp_path / "web_ui_charts.png"
        driver.save_screenshot(str(shot))
        if os.environ.get("LLMLOAD_DOCS_SCREENSHOTS"):
            shutil.copyfile(shot, DOCS_PNG)

        # Log scale for the latencies, then one class: redrawn, nothing broken.
        driver.switch_to.frame(frame)
        driver.find_element(By.ID, "log").click()
        Select(driver.find_element(By.ID, "class")).select_by_value("long")
        long_ = get_json(base + "/llmload/series?class=long")["columns"]
        ok_long = [v for v in long_["ok_per_s"] if v is not None][-1]
        assert ok_long < [v for v in col["ok_per_s"] if v is not None][-1]  # one class of three: fewer than all

        def shows_long(d):
            text = text_of(d, "#chart-rate b[data-key='ok_per_s']")
            return number(text) == pytest.approx(ok_long, abs=0.01)

        wait.until(shows_long)
        ttft = text_of(driver, "#chart-ttft b[data-key='ttft_p50_ms']")
        assert number(ttft.replace(",", "")) == pytest.approx(
            [v for v in long_["ttft_p50_ms"] if v is not None][-1], rel=0.02
        )
        assert driver.execute_script("return window.llmloadErrors") == []
        driver.switch_to.default_content()
        driver.save_screenshot(str(tmp_path / "web_ui_charts_log_long.png"))
    except BaseException:
        if driver is not None:
            driver.switch_to.default_content()
            driver.save_screenshot(str(tmp_path / "failure.png"))
            sys.stderr.write(f"screenshot: {tmp_path / 'failure.png'}\n{log.read_text()[-3000:]}\n")
        raise
    finally:
        if driver is not None:
            driver.quit()
        stop_process(proc)
    output = log.read_text()
    assert "Uncaught exception" not in output and "could not sample the live charts" not in output, output[-4000:]
    assert proc.returncode == 0, output[-3000:]
