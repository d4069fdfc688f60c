// llmload live charts: polls ./series (llmload/web/series.py) and draws it with uPlot.
// Runs as a page of its own or inside the LLM tab's frame (static/loader.js); same time axis
// for every chart, cursors in sync, ladder steps as vertical lines, the baseline and the
// verdict's limit as dashed lines once the baseline is measured.
(() => {
  'use strict';
  const POLL_MS = 2000;
  const C = { p50: '#1f77b4', p99: '#d62728', base: '#7f7f7f', limit: '#ff7f0e', a: '#2ca02c', b: '#9467bd' };
  // [column, label, colour, scale factor, optional: drawn only once it has a value (TTFO: some request reasoned)]
  const CHARTS = [
    { id: 'ttft', title: 'TTFT', unit: 'ms', base: 'ttft_p50_ms',
      series: [['ttft_p50_ms', 'p50', C.p50], ['ttft_p99_ms', 'p99', C.p99], ['ttfo_p50_ms', 'TTFO p50', C.b, 1, true]] },
    { id: 'tpot', title: 'TPOT', unit: 'ms', base: 'tpot_p50_ms',
      series: [['tpot_p50_ms', 'p50', C.p50], ['tpot_p99_ms', 'p99', C.p99]] },
    { id: 'tokens', title: 'Output tokens/s', unit: '',
      series: [['output_tokens_per_s', 'output tok/s', C.a]] },
    { id: 'load', title: 'Users and requests in flight', unit: '',
      series: [['users', 'users', C.base], ['in_flight', 'in flight', C.p50]] },
    { id: 'rate', title: 'Requests/s', unit: '',
      series: [['ok_per_s', 'OK req/s', C.a], ['errors_per_s', 'Err/s', C.p99]] },
    { id: 'errors', title: 'Error rate', unit: '%',
      series: [['error_rate', 'failed / finished', C.p99, 100]] },
    { id: 'queue', title: 'Engine: waiting and running', unit: '', group: true,
      series: [['waiting', 'waiting', C.p99], ['running', 'running', C.p50]] },
    { id: 'kv', title: 'Engine: KV-cache usage', unit: '%', group: true,
      series: [['kv_cache_usage', 'KV cache', C.b, 100]] },
    { id: 'gpu', title: 'GPU', unit: '%', group: true,
      series: [['utilization', 'utilisation', C.a, 100], ['memory_bandwidth_utilization', 'memory bandwidth', C.b, 100]] },
  ];
  const $ = (id) => document.getElementById(id);
  const state = { generation: null, t: [], cols: {}, steps: [], baseline: null, factor: null, cls: 'Overall' };
  const plots = {};

  // Colours of the page around the frame (Locust's light or dark theme), else our own.
  function hostColour() {
    try {
      if (window.frameElement) return getComputedStyle(window.parent.document.body).color;
    } catch (e) { /* another origin: keep ours */ }
    return getComputedStyle(document.body).color;
  }
  let fg = hostColour();
  document.documentElement.style.setProperty('--fg', fg);

  function fmt(v) {  // a reading: counts as integers, others to about 3 digits
    if (v == null) return '–';
    const a = Math.abs(v);
    if (Number.isInteger(v) || a >= 100) return Math.round(v).toLocaleString('en');
    return a >= 10 ? v.toFixed(1) : v.toFixed(2);
  }
  const tick = (v) => (v == null ? '' : (+v.toPrecision(4)).toLocaleString('en'));  // an axis value
  const last = (arr) => { for (let i = arr.length - 1; i >= 0; i--) if (arr[i] != null) return arr[i]; return null; };
  const scaled = (key, k) => (state.cols[key] || []).map((v) => (v == null ? null : v * (k || 1)));

  // Ladder steps: a line where each step starts (its user count on top), its warm-up shaded.
  function drawSteps(u) {
    const { ctx, bbox } = u;
    const dpr = window.devicePixelRatio || 1;
    ctx.save();
    for (const s of state.steps) {
      const x0 = u.valToPos(s.started_at, 'x', true);
      if (s.steady_from) {
        const x1 = u.valToPos(s.steady_from, 'x', true);
        ctx.fillStyle = 'rgba(127,127,127,0.10)';
        ctx.fillRect(Math.max(x0, bbox.left), bbox.top, Math.max(0, Math.min(x1, bbox.left + bbox.width) - Math.max(x0, bbox.left)), bbox.height);
      }
      const label = s.index < 0 ? 'baseline' : `${s.users} u`;
      ctx.fillStyle = fg;
      ctx.font = `${11 * dpr}px system-ui, sans-serif`;
      if (x0 < bbox.left) {  // began before the first point: its label at the left edge, while it shows
        const end = s.ended_at == null ? Infinity : u.valToPos(s.ended_at, 'x', true);
        if (end > bbox.left + 30 * dpr) ctx.fillText(label, bbox.left + 3 * dpr, bbox.top + 12 * dpr);
        continue;
      }
      if (x0 > bbox.left + bbox.width) continue;
      ctx.strokeStyle = 'rgba(127,127,127,0.8)';
      ctx.lineWidth = dpr;
      ctx.beginPath(); ctx.moveTo(x0, bbox.top); ctx.lineTo(x0, bbox.top + bbox.height); ctx.stroke();
      ctx.fillText(label, x0 + 3 * dpr, bbox.top + 12 * dpr);
    }
    ctx.restore();
  }

  function lines(chart) {
    // The chart's series, plus the baseline and limit lines where the chart has a baseline.
    const out = shown(chart).map(([key, label, stroke, k]) => ({ key, label, stroke, data: scaled(key, k) }));
    const b = chart.base && state.baseline && state.baseline[chart.base];
    if (b != null) {
      const n = state.t.length;
      const of = state.cls === 'Overall' ? '' : ' (all classes)';  // the live baseline is the whole step's
      out.push({ label: `baseline p50${of}`, stroke: C.base, dash: [4, 4], data: new Array(n).fill(b) });
      if (state.factor) out.push({ label: `limit ${state.factor}× baseline`, stroke: C.limit, dash: [6, 3], data: new Array(n).fill(b * state.factor) });
    }
    return out;
  }

  function shown(chart) {  // the chart's series without optional ones that have no value yet
    return chart.series.filter(([key, , , , optional]) => !optional || (state.cols[key] || []).some((v) => v != null));
  }

  function build(chart, el, series) {
    const grid = { stroke: 'rgba(128,128,128,0.18)', width: 1 };
    const axis = { stroke: fg, grid, ticks: grid };
    const opts = {
      width: Math.max(300, el.clientWidth), height: 190,
      cursor: { sync: { key: 'llmload' } },
      scales: { x: { time: true }, y: chart.unit === 'ms' && $('log').checked
        ? { distr: 3 }  // log: the baseline and its limit stay readable when the tail grows 50-fold
        : { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] } },
      axes: [axis, { ...axis, size: 56, values: (u, vals) => vals.map(tick) }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.stroke, width: 1.5, dash: s.dash, spanGaps: false, value: (u, v) => fmt(v) }))],
      hooks: { draw: [drawSteps] },
    };
    return new uPlot(opts, [state.t, ...series.map((s) => s.data)], el);
  }

  function render() {
    const root = $('charts');
    for (const chart of CHARTS) {
      const series = lines(chart);
      const any = series.some((s) => s.data.some((v) => v != null));
      let p = plots[chart.id];
      if (!p) {
        const box = document.createElement('section');
        box.className = 'chart'; box.id = `chart-${chart.id}`;
        const unit = chart.unit ? ` (${chart.unit})` : '';
        box.innerHTML = `<div class="head"><span class="title">${chart.title}${unit}</span><span class="now"></span></div><div class="plot"></div>`;
        root.appendChild(box);
        p = plots[chart.id] = { box, now: box.querySelector('.now'), el: box.querySelector('.plot'), u: null, labels: '' };
      }
      p.box.hidden = !!chart.group && !any;  // engine and GPU charts only when collection gives values
      if (p.box.hidden) continue;
      p.now.innerHTML = 'now ' + shown(chart).map(([key, label, , k]) =>
        `${label} <b data-key="${key}">${fmt(last(scaled(key, k)))}</b>`).join(' · ');
      const labels = series.map((s) => s.label).join('|');
      if (p.u && p.labels !== labels) { p.u.destroy(); p.u = null; }  // baseline lines appeared: new series
      if (!p.u) { p.u = build(chart, p.el, series); p.labels = labels; }
      else p.u.setData([state.t, ...series.map((s) => s.data)]);
    }
    if (window.frameElement) window.frameElement.style.height = `${Math.ceil(document.body.getBoundingClientRect().bottom) + 4}px`;
  }

  function merge(d) {
    if (d.class !== state.cls) return;  // an answer for the class chosen before
    if (d.full) { state.t = []; state.cols = {}; }
    state.generation = d.generation;
    state.t = state.t.concat(d.t);
    for (const [k, v] of Object.entries(d.columns)) state.cols[k] = (state.cols[k] || []).concat(v);
    const extra = state.t.length - d.capacity;
    if (extra > 0) {
      state.t = state.t.slice(extra);
      for (const k of Object.keys(state.cols)) state.cols[k] = state.cols[k].slice(extra);
    }
    state.steps = d.steps; state.baseline = d.baseline; state.factor = d.limit_factor;
    const sel = $('class');
    if (sel.options.length !== d.classes.length || [...sel.options].some((o, i) => o.value !== d.classes[i])) {
      sel.replaceChildren(...d.classes.map((c) => new Option(c, c)));
      sel.value = state.cls;
    }
    const ladder = $('ladder');  // a ladder's step, time left in it and the verdict so far (llmload/ladder/status.py)
    ladder.hidden = !d.ladder;
    ladder.textContent = d.ladder ? d.ladder.text : '';
    const n = state.t.length;
    $('status').textContent = n
      ? `${d.state || 'no test'} · ${n} points, one every ${d.interval_s} s, each over the last ${d.window_s} s (as in the table)`
      : 'waiting for a test: the charts fill in every few seconds while one runs';
  }

  function poll() {
    setTimeout(poll, POLL_MS);  // whatever happens in refresh
    refresh();
  }

  async function refresh() {
    const hidden = window.frameElement ? window.frameElement.offsetParent === null : document.hidden;
    if (hidden && state.generation !== null) return;
    const q = new URLSearchParams({ class: state.cls });
    if (state.generation !== null) {
      q.set('generation', state.generation);
      if (state.t.length) q.set('since', state.t[state.t.length - 1]);
    }
    let d = null;
    try {
      const r = await fetch(`series?${q}`, { cache: 'no-store' });
      if (r.ok) d = await r.json();
    } catch (e) { return; }  // the UI went away or restarts: the next poll tries again
    if (!d) return;
    merge(d);
    const now = hostColour();
    if (now !== fg) {  // the UI switched between light and dark
      fg = now; document.documentElement.style.setProperty('--fg', fg);
      for (const p of Object.values(plots)) if (p.u) { p.u.destroy(); p.u = null; }
    }
    render();
  }

  // Script errors are kept for the browser test (tests/integration/test_web_ui_charts.py).
  window.llmloadErrors = [];
  window.addEventListener('error', (e) => window.llmloadErrors.push(String(e.message)));
  window.addEventListener('unhandledrejection', (e) => window.llmloadErrors.push(String(e.reason)));

  $('class').addEventListener('change', (e) => {
    Object.assign(state, { cls: e.target.value, generation: null, t: [], cols: {} });
    render();  // empty until the class's series arrive, at once
    refresh();
  });
  $('log').addEventListener('change', () => {
    for (const id of ['ttft', 'tpot']) if (plots[id] && plots[id].u) { plots[id].u.destroy(); plots[id].u = null; }
    render();
  });
  window.addEventListener('resize', () => {
    for (const p of Object.values(plots)) if (p.u && !p.box.hidden) p.u.setSize({ width: Math.max(300, p.el.clientWidth), height: 190 });
  });
  poll();
})();
