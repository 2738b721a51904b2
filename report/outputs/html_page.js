/*
 * gpubench's HTML report page (report/outputs/html_out.c inlines it after Chart.js). It
 * reads the run from the JSON element #gb-data and builds everything with
 * textContent, never markup: names, configurations and reasons may come from a
 * copied cache. Per kernel: performance against problem size (the best and the
 * baseline), the spread of every trial's samples per shape, and a roofline.
 *
 * When every chart is drawn, <body data-charts-drawn="N" data-charts-expected="N">
 * says so (animation is off, so a chart is drawn when it is constructed); any
 * script error sets data-chart-error to its message. The tests read both.
 */
(function () {
  'use strict';

  var body = document.body;
  function fail(message) {
    if (!body.dataset.chartError) body.dataset.chartError = String(message || 'error');
  }
  window.addEventListener('error', function (e) { fail(e.message); });

  var BLUE = '#1f5fbf', ORANGE = '#e8590c', GREY = '#6c7686', GREEN = '#2b8a3e';

  /* ---- small helpers ---------------------------------------------------- */

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, tag, cls, text) {
    var node = el(tag, cls, text);
    parent.appendChild(node);
    return node;
  }
  function num(v, digits) {
    if (typeof v !== 'number' || !isFinite(v)) return '–';
    if (v !== 0 && Math.abs(v) < 1e-3) return v.toExponential(2);
    return String(Number(v.toPrecision(digits || 4)));
  }
  function fixed(v, places) {
    return typeof v === 'number' && isFinite(v) ? v.toFixed(places) : '–';
  }
  function alpha(hex, a) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + a + ')';
  }
  function quantile(sorted, q) {
    var at = (sorted.length - 1) * q, lo = Math.floor(at), hi = Math.ceil(at);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
  }
  /* A measurement's five numbers, worked out from its samples when absent. */
  function summary(m) {
    if (!m) return null;
    if (m.n > 0 && typeof m.median === 'number') return m;
    var s = (m.samples || []).filter(function (v) { return typeof v === 'number'; });
    if (!s.length) return null;
    s.sort(function (a, b) { return a - b; });
    return { n: s.length, min: s[0], q1: quantile(s, 0.25), median: quantile(s, 0.5),
             q3: quantile(s, 0.75), max: s[s.length - 1], samples: m.samples };
  }

  /* ---- what a kernel's entries are measured in ---------------------------- */

  /* TFLOP/s when the flops are known, else GB/s, else the time. */
  function metricOf(entries) {
    if (entries.some(function (e) { return e.flops > 0; }))
      return { unit: 'TFLOP/s', of: function (e, ms) { return e.flops > 0 && ms > 0 ? e.flops / (ms * 1e-3) / 1e12 : null; } };
    if (entries.some(function (e) { return e.bytes > 0; }))
      return { unit: 'GB/s', of: function (e, ms) { return e.bytes > 0 && ms > 0 ? e.bytes / (ms * 1e-3) / 1e9 : null; } };
    return { unit: 'ms', of: function (e, ms) { return ms > 0 ? ms : null; } };
  }

  /* The problem size as a number when the shapes vary along one field (or along
   * several that are equal in every shape, as M=N=K); else null: run order. */
  function sizeAxisOf(entries) {
    if (entries.length < 2) return null;
    var names = Object.keys(entries[0].shape || {});
    var varying = names.filter(function (n) {
      return entries.some(function (e) { return !e.shape || e.shape[n] !== entries[0].shape[n]; });
    });
    if (!varying.length) return null;
    var ok = entries.every(function (e) {
      var v = e.shape && e.shape[varying[0]];
      return typeof v === 'number' && v > 0 && varying.every(function (n) { return e.shape[n] === v; });
    });
    if (!ok) return null;
    var values = entries.map(function (e) { return e.shape[varying[0]]; });
    var span = Math.max.apply(null, values) / Math.min.apply(null, values);
    return { title: varying.join(' = '), value: function (e) { return e.shape[varying[0]]; }, log: span >= 8 };
  }

  /* ---- charts: planned first, so the expected count is known, then drawn --- */

  var planned = [];

  function plan(parent, title, config, hint) {
    var fig = add(parent, 'figure', 'chart');
    add(fig, 'figcaption', null, title);
    if (hint) add(fig, 'p', 'hint', hint);
    var box = add(fig, 'div', 'canvas');
    var canvas = add(box, 'canvas');
    config.options = config.options || {};
    config.options.animation = false;
    config.options.responsive = true;
    config.options.maintainAspectRatio = false;
    planned.push({ canvas: canvas, config: config });
  }

  function drawAll() {
    body.dataset.chartsExpected = String(planned.length);
    var drawn = 0;
    planned.forEach(function (p) {
      try {
        new Chart(p.canvas, p.config);
        drawn++;
      } catch (e) {
        fail(e && e.message ? e.message : e);
      }
    });
    body.dataset.chartsDrawn = String(drawn);
  }

  function axis(title, extra) {
    var a = { title: { display: true, text: title, font: { size: 13 } }, ticks: { font: { size: 12 } } };
    for (var k in extra) a[k] = extra[k];
    return a;
  }

  /* ---- performance against problem size ----------------------------------- */

  function perfChart(parent, kernel, entries) {
    var metric = metricOf(entries), size = sizeAxisOf(entries);
    var best = [], base = [];
    entries.forEach(function (e) {
      var x = size ? size.value(e) : e.key;
      var b = summary(e.best), r = summary(e.baseline);
      best.push({ x: x, y: b ? metric.of(e, b.median) : null, key: e.key, config: e.best_config });
      base.push({ x: x, y: r ? metric.of(e, r.median) : null, key: e.key });
    });
    if (size) {
      best.sort(function (a, b) { return a.x - b.x; });
      base.sort(function (a, b) { return a.x - b.x; });
    }
    var datasets = [{
      label: 'tuned (best)', data: best, borderColor: BLUE, backgroundColor: BLUE,
      pointRadius: 5, pointHoverRadius: 7, borderWidth: 2.5
    }];
    if (base.some(function (p) { return p.y !== null; }))
      datasets.push({ label: 'baseline', data: base, borderColor: GREY, backgroundColor: GREY,
                      borderDash: [6, 4], pointRadius: 4, pointStyle: 'rectRot', borderWidth: 2 });
    var x = size ? axis(size.title, { type: size.log ? 'logarithmic' : 'linear' })
                 : axis('shape (run order)', { type: 'category', offset: true, labels: entries.map(function (e) { return e.key; }) });
    plan(parent, kernel + ': ' + metric.unit + ' against problem size', {
      type: 'line',
      data: { datasets: datasets },
      options: {
        parsing: { xAxisKey: 'x', yAxisKey: 'y' },
        spanGaps: true, /* a shape that timed nothing leaves no point; the line goes on */
        scales: { x: x, y: axis(metric.unit, { beginAtZero: metric.unit !== 'ms' }) },
        plugins: {
          tooltip: { callbacks: { label: function (c) {
            var p = c.raw;
            return c.dataset.label + ' ' + p.key + ': ' + num(p.y) + ' ' + metric.unit + (p.config ? ' (' + p.config + ')' : '');
          } } }
        }
      }
    });
  }

  /* ---- the spread of every trial's samples, per shape ---------------------- */

  /* The columns: the best's race, then the ok trials from the fastest, then the
   * baseline; each with its five numbers and samples. */
  function columnsOf(e) {
    var cols = [], b = summary(e.best);
    if (b) cols.push({ label: '★ best (race): ' + e.best_config, s: b, color: ORANGE });
    var ok = (e.trials || []).filter(function (t) { return t.status === 'ok' && summary(t.time); });
    ok.sort(function (p, q) { return summary(p.time).median - summary(q.time).median; });
    ok.forEach(function (t) {
      var isBest = t.config === e.best_config;
      cols.push({ label: (isBest ? '★ ' : '') + t.config, s: summary(t.time), color: isBest ? ORANGE : BLUE });
    });
    var r = summary(e.baseline);
    if (r) cols.push({ label: 'baseline', s: r, color: GREY });
    return cols;
  }

  /* The same offset for the same sample on every draw: a strip, not a random cloud. */
  function jitter(i) {
    var x = Math.sin(i * 12.9898) * 43758.5453;
    return (x - Math.floor(x) - 0.5) * 0.5;
  }

  function spreadChart(parent, kernel, e) {
    var cols = columnsOf(e);
    if (!cols.length) return false;
    var samples = [], k = 0;
    cols.forEach(function (c, i) {
      (c.s.samples || []).forEach(function (v) {
        samples.push({ x: i + jitter(k++), y: v, col: i });
      });
    });
    var labels = cols.map(function (c) { return c.label; });
    var colors = cols.map(function (c) { return c.color; });
    var datasets = [
      { type: 'bar', label: 'min–max', data: cols.map(function (c) { return [c.s.min, c.s.max]; }),
        backgroundColor: colors.map(function (c) { return alpha(c, 0.55); }), barPercentage: 0.06,
        maxBarThickness: 3, categoryPercentage: 1, grouped: false, order: 3 },
      { type: 'bar', label: 'q1–q3', data: cols.map(function (c) { return [c.s.q1, c.s.q3]; }),
        backgroundColor: colors.map(function (c) { return alpha(c, 0.22); }), borderColor: colors,
        borderWidth: 1.5, borderSkipped: false, barPercentage: 0.6, maxBarThickness: 90, categoryPercentage: 1, grouped: false, order: 2 },
      { type: 'line', label: 'median', data: cols.map(function (c) { return c.s.median; }), showLine: false,
        pointStyle: 'line', pointRadius: 14, pointHoverRadius: 14, borderWidth: 3, borderColor: colors,
        backgroundColor: colors, order: 1 },
      { type: 'scatter', label: 'samples', xAxisID: 'xs', data: samples, order: 0, pointRadius: 2.2,
        backgroundColor: samples.map(function (p) { return alpha(colors[p.col], 0.6); }), borderWidth: 0 }
    ];
    var tooltip = { callbacks: {
      title: function (items) {
        var c = items[0], i = c.dataset.xAxisID === 'xs' ? c.raw.col : c.dataIndex;
        return labels[i];
      },
      label: function (c) {
        if (c.dataset.xAxisID === 'xs') return 'sample ' + num(c.raw.y) + ' ms';
        var s = cols[c.dataIndex].s;
        return 'median ' + num(s.median) + ' ms, q1–q3 ' + num(s.q1) + '–' + num(s.q3) + ', min–max ' + num(s.min) + '–' + num(s.max) + ' (n ' + s.n + ')';
      }
    } };
    plan(parent, kernel + ' ' + e.key + ': time of every trial (ms)', {
      type: 'bar',
      data: { labels: labels, datasets: datasets },
      options: {
        scales: {
          x: axis('configuration (fastest first)', { ticks: { autoSkip: true, maxRotation: 35, minRotation: 0,
            font: { size: 11 }, callback: function (v) { var t = labels[v]; return t.length > 36 ? t.slice(0, 35) + '…' : t; } } }),
          xs: { type: 'linear', display: false, min: -0.5, max: cols.length - 0.5 },
          y: axis('time (ms)', { beginAtZero: false, grace: '4%' })
        },
        plugins: { legend: { display: false }, tooltip: tooltip }
      }
    }, 'Box: q1–q3; dash: median; line: min–max; dots: every sample. Orange: the best; grey: the baseline.');
    return true;
  }

  /* ---- roofline ---------------------------------------------------------- */

  /* The roof of a memory bandwidth (GB/s) and a compute rate (TFLOP/s) over [lo, hi]
   * flop/B: either may be unknown (0). */
  function roof(gbps, tflops, lo, hi) {
    if (gbps > 0 && tflops > 0) {
      var ridge = tflops * 1e3 / gbps;
      if (ridge <= lo) return [{ x: lo, y: tflops }, { x: hi, y: tflops }];
      if (ridge >= hi) return [{ x: lo, y: lo * gbps / 1e3 }, { x: hi, y: hi * gbps / 1e3 }];
      return [{ x: lo, y: lo * gbps / 1e3 }, { x: ridge, y: tflops }, { x: hi, y: tflops }];
    }
    if (gbps > 0) return [{ x: lo, y: lo * gbps / 1e3 }, { x: hi, y: hi * gbps / 1e3 }];
    return [{ x: lo, y: tflops }, { x: hi, y: tflops }];
  }

  function rooflineChart(parent, kernel, entries, roofs) {
    var placed = entries.filter(function (e) { return e.intensity > 0 && e.tflops > 0; });
    if (!roofs || !placed.length) return false;
    var maths = [];
    placed.forEach(function (e) { if (maths.indexOf(e.math) < 0) maths.push(e.math); });
    var xs = placed.map(function (e) { return e.intensity; });
    maths.forEach(function (m) {
      [[roofs.peak_gbps, roofs.peak_tflops[m]], [roofs.ceiling_gbps, roofs.ceiling_tflops[m]]].forEach(function (r) {
        if (r[0] > 0 && r[1] > 0) xs.push(r[1] * 1e3 / r[0]);
      });
    });
    var lo = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, xs) / 4)));
    var hi = Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, xs) * 4)));
    var datasets = [], top = 0;
    maths.forEach(function (m) {
      var pg = roofs.peak_gbps || 0, pt = roofs.peak_tflops[m] || 0;
      if (pg > 0 || pt > 0)
        datasets.push({ label: 'peak roof (' + m + ')', data: roof(pg, pt, lo, hi), showLine: true,
                        borderColor: '#9aa3b2', borderDash: [6, 4], borderWidth: 2, pointRadius: 0 });
      /* The measured roof: a ceiling not measured is the peak's. */
      var cg = roofs.ceiling_gbps || 0, ct = roofs.ceiling_tflops[m] || 0;
      if (cg > 0 || ct > 0)
        datasets.push({ label: (cg > 0 && ct > 0 ? 'measured roof' : cg > 0 ? 'measured memory roof' : 'measured compute roof') + ' (' + m + ')',
                        data: roof(cg || pg, ct || pt, lo, hi), showLine: true, borderColor: GREEN, borderWidth: 2, pointRadius: 0 });
      top = Math.max(top, pt, ct);
    });
    datasets.push({ label: 'tuned (best)', data: placed.map(function (e) {
      return { x: e.intensity, y: e.tflops, key: e.key };
    }), backgroundColor: BLUE, borderColor: BLUE, pointRadius: 6, pointHoverRadius: 8 });
    var base = placed.filter(function (e) { return summary(e.baseline); }).map(function (e) {
      return { x: e.intensity, y: e.flops / (summary(e.baseline).median * 1e-3) / 1e12, key: e.key };
    });
    if (base.length)
      datasets.push({ label: 'baseline', data: base, backgroundColor: GREY, borderColor: GREY,
                      pointStyle: 'rectRot', pointRadius: 6 });
    /* A decade below the lowest point, and above the highest compute roof (or point). */
    var ys = placed.map(function (e) { return e.tflops; }).concat(base.map(function (p) { return p.y; }));
    var bottom = Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, ys) / 3)));
    var ceiling = Math.pow(10, Math.ceil(Math.log10(Math.max(top, Math.max.apply(null, ys)) * 1.5)));
    plan(parent, kernel + ': roofline', {
      type: 'scatter',
      data: { datasets: datasets },
      options: {
        scales: {
          x: axis('arithmetic intensity (flop/byte)', { type: 'logarithmic', min: lo, max: hi }),
          y: axis('TFLOP/s', { type: 'logarithmic', min: bottom, max: ceiling })
        },
        plugins: { tooltip: { callbacks: { label: function (c) {
          var p = c.raw;
          return (p.key ? c.dataset.label + ' ' + p.key : c.dataset.label) + ': ' + num(p.y) + ' TFLOP/s at ' + num(p.x) + ' flop/B';
        } } } }
      }
    });
    return true;
  }

  /* ---- the header and the tables ------------------------------------------ */

  function header(main, ctx) {
    add(main, 'h1', null, 'gpubench report');
    add(main, 'p', 'sub', [ctx.script || ctx.executable, ctx.date].filter(Boolean).join(' · '));
    var dl = add(main, 'dl', 'context');
    function row(name, value, mono) {
      if (value === null || value === undefined || value === '') return;
      add(dl, 'dt', null, name);
      add(dl, 'dd', mono ? 'mono' : null, value);
    }
    row('Date', ctx.date);
    row('Host', ctx.host_name + (ctx.num_cpus ? ' (' + ctx.num_cpus + ' CPUs)' : ''));
    row('Command line', ctx.command_line, true);
    var d = ctx.device;
    if (d) {
      row('Device', d.name + ' · compute capability ' + d.cc + ' · ' + d.sms + ' SMs · ' + d.sm_clock_mhz + ' MHz · ' +
          fixed(d.mem_bytes / 1073741824, 0) + ' GiB · L2 ' + fixed(d.l2_bytes / 1048576, 0) + ' MiB');
      row('Driver', (ctx.driver_version || '?') + (d.clock_source ? ' · clocks from ' + d.clock_source : ''));
    } else {
      row('Device', ctx.compile_only ? 'none (compiled only)' : 'none');
    }
    row('Target', ctx.arch);
    row('Versions', 'gpubench ' + ctx.gpubench_version + (ctx.nvrtc_version ? ' · NVRTC ' + ctx.nvrtc_version : ''));
    var r = ctx.roofs;
    if (r) {
      var parts = [];
      if (r.peak_gbps > 0) parts.push('memory ' + fixed(r.peak_gbps, 0) + ' GB/s peak' +
                                      (r.ceiling_gbps > 0 ? ', ' + fixed(r.ceiling_gbps, 0) + ' measured' : ''));
      Object.keys(r.peak_tflops).filter(function (m) { return r.peak_tflops[m] > 0; }).forEach(function (m) {
        parts.push(m + ' ' + num(r.peak_tflops[m]) + ' TFLOP/s' +
                   (r.ceiling_tflops[m] > 0 ? ' (' + num(r.ceiling_tflops[m]) + ' measured)' : ''));
      });
      row('Roofs', parts.join(' · '));
    }
  }

  /* The entry's status in the words every output uses; "tuned" goes without saying. */
  function tags(e) {
    return e.status && e.status !== 'tuned' ? [[e.status, e.status_bad]] : [];
  }

  function cell(tr, text, cls) { return add(tr, 'td', cls, text); }

  function bestsTable(main, entries) {
    add(main, 'h2', null, 'Bests');
    var table = add(main, 'table');
    var head = add(add(table, 'thead'), 'tr');
    [['Kernel'], ['Shape'], ['Best configuration'], ['Median ms', 'num'], ['TFLOP/s', 'num'], ['GB/s', 'num'],
     ['% ceil', 'num'], ['% peak', 'num'], ['Baseline ms', 'num'], ['Speedup', 'num'], ['Notes']].forEach(function (h) {
      add(head, 'th', h[1], h[0]);
    });
    var tbody = add(table, 'tbody');
    entries.forEach(function (e) {
      var tr = add(tbody, 'tr', e.status_bad && !e.best ? 'failed' : null);
      var b = summary(e.best), r = summary(e.baseline);
      cell(tr, e.kernel);
      cell(tr, e.key, 'mono');
      cell(tr, e.best_config || '–', 'mono');
      cell(tr, b ? num(b.median) : '–', 'num');
      cell(tr, e.tflops > 0 ? num(e.tflops) : '–', 'num');
      cell(tr, e.gbps > 0 ? num(e.gbps) : '–', 'num');
      cell(tr, e.pct_ceil > 0 ? fixed(e.pct_ceil, 1) + (e.memory_bound ? ' (mem)' : '') : '–', 'num');
      cell(tr, e.pct_peak > 0 ? fixed(e.pct_peak, 1) : '–', 'num');
      cell(tr, r ? num(r.median) : '–', 'num');
      cell(tr, b && r ? fixed(r.median / b.median, 2) + '×' : '–', 'num');
      var notes = cell(tr, '', 'notes');
      tags(e).forEach(function (t) { add(notes, 'span', t[1] ? 'tag bad' : 'tag', t[0]); });
      if (e.reason) add(notes, 'span', 'reason', e.reason);
    });
  }

  /* A --compile-only call: a row per compile, as the text table has it, and its summary. */
  function compileTable(parent, c) {
    add(parent, 'h3', null, 'Compiles' + (c.arch ? ' for ' + c.arch : ''));
    var table = add(parent, 'table');
    var head = add(add(table, 'thead'), 'tr');
    [['Configuration'], ['Registers', 'num'], ['Local B', 'num'], ['Spill B', 'num'], ['Shared B', 'num'],
     ['ms', 'num'], ['Status'], ['Reason']].forEach(function (h) { add(head, 'th', h[1], h[0]); });
    var tbody = add(table, 'tbody');
    (c.rows || []).forEach(function (r) {
      var tr = add(tbody, 'tr', r.status === 'compile_error' ? 'failed' : null);
      var keys = Object.keys(r.config || {});
      cell(tr, keys.length ? keys.map(function (k) { return k + '=' + r.config[k]; }).join(',') : '-', 'mono');
      var spill = r.spill_store_bytes === null || r.spill_load_bytes === null ? null
                                                                             : r.spill_store_bytes + r.spill_load_bytes;
      [r.registers, r.stack_bytes, spill, r.smem_static_bytes].forEach(function (v) {
        cell(tr, v === null || v === undefined ? '–' : v, 'num');
      });
      cell(tr, fixed(r.compile_ms, 0), 'num');
      cell(tr, r.status);
      cell(tr, r.reason, 'reason mono');
    });
    add(parent, 'p', 'note', c.summary);
  }

  function trialsTable(parent, e) {
    var trials = e.trials || [];
    if (!trials.length) return;
    var failed = trials.filter(function (t) { return t.status !== 'ok'; }).length;
    var details = add(parent, 'details');
    add(details, 'summary', null, e.key + ': ' + trials.length + ' trials (' + failed + ' failed)');
    var table = add(details, 'table');
    var head = add(add(table, 'thead'), 'tr');
    [['Configuration'], ['Status'], ['Median ms', 'num'], ['Samples', 'num'], ['Reason']].forEach(function (h) {
      add(head, 'th', h[1], h[0]);
    });
    var tbody = add(table, 'tbody');
    trials.forEach(function (t) {
      var tr = add(tbody, 'tr', t.status === 'ok' ? null : 'failed');
      var s = summary(t.time);
      cell(tr, (t.config === e.best_config ? '★ ' : '') + t.config, 'mono');
      cell(tr, t.status + (t.resumed ? ' (earlier run)' : ''));
      cell(tr, s ? num(s.median) : '–', 'num');
      cell(tr, s ? s.n : '–', 'num');
      cell(tr, t.reason, 'reason mono');
    });
  }

  /* ---- per kernel ------------------------------------------------------- */

  /* Per kernel, in the order the run met them: its entries (a compile-only call of
   * no shapes still has a section). */
  function kernels(entries, compiles) {
    var order = [], by = {};
    function meet(name) {
      if (!Object.prototype.hasOwnProperty.call(by, name)) { by[name] = []; order.push(name); }
    }
    entries.forEach(function (e) { meet(e.kernel); by[e.kernel].push(e); });
    compiles.forEach(function (c) { meet(c.kernel); });
    return order.map(function (k) { return { name: k, entries: by[k] }; });
  }

  function kernelSection(main, k, roofs, compiles) {
    var first = k.entries[0] || {};
    var calls = compiles.filter(function (c) { return c.kernel === k.name; });
    add(main, 'h2', null, k.name);
    add(main, 'p', 'sub', (calls.length ? 'compiled only: nothing was timed'
                                        : first.bench ? 'benchmark of fixed configurations' : 'tuned') +
        (first.math ? ' · math ' + first.math : '') + ' · ' + k.entries.length +
        (k.entries.length === 1 ? ' shape' : ' shapes'));
    calls.forEach(function (c) { compileTable(main, c); });
    if (calls.length) return;
    var top = add(main, 'div', 'grid');
    perfChart(top, k.name, k.entries);
    if (!rooflineChart(top, k.name, k.entries, roofs))
      add(top, 'p', 'note', roofs ? 'No roofline: the flops or bytes of ' + k.name + ' are unknown.'
                                  : 'No roofline: the run had no device.');
    add(main, 'h3', null, 'Time of every trial, per shape');
    var grid = add(main, 'div', 'grid');
    k.entries.forEach(function (e) {
      if (!spreadChart(grid, k.name, e))
        add(grid, 'p', 'note bad', e.key + ': nothing was timed (' + e.status + (e.reason ? ': ' + e.reason : '') +
            '); ' + (e.trials || []).length + ' trials failed.');
    });
    k.entries.forEach(function (e) { trialsTable(main, e); });
  }

  function build() {
    var data = JSON.parse(document.getElementById('gb-data').textContent);
    var ctx = data.context || {}, entries = data.entries || [], compiles = data.compiles || [];
    var main = document.getElementById('report');
    header(main, ctx);
    bestsTable(main, entries);
    kernels(entries, compiles).forEach(function (k) {
      kernelSection(main, k, ctx.device ? ctx.roofs : null, compiles);
    });
    if (!entries.length) add(main, 'p', 'note', 'The run measured nothing.');
    add(main, 'footer', null, 'Made by gpubench ' + ctx.gpubench_version + ' with Chart.js ' + (window.Chart ? Chart.version : '?') + ', inlined: this page loads nothing.');
    if (!window.Chart) throw new Error('Chart.js did not load');
    Chart.defaults.font.family = getComputedStyle(body).fontFamily;
    drawAll();
  }

  try {
    build();
  } catch (e) {
    fail(e && e.message ? e.message : e);
  }
})();
