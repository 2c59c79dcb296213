// SPDX-License-Identifier: MIT
// The HTML report's renderer, inlined into every page by report_html.cpp (no network). It reads
// the data block (#commprof-data) and draws: per-rank bars, busbw against size, the per-step
// trend (SVG); every drawn rank's timeline of one step and the straggler heatmap (canvas, so a
// thousand ranks stay fast); it makes the tables sortable. Text from files only ever reaches the
// page through textContent. What it drew is written to #render-check for headless tests: the
// canvases' counts are read back from their pixels, not from the data block.
// At scale (16,384 ranks) nothing is drawn per rank that a screen cannot show: the per-rank bars
// and the heatmap's rows are rank groups (the data block's heatmap comes binned), long tables are
// paged from the data block, and the timeline's folded ranks likewise.
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('commprof-data').textContent);
  const CAT = ['COMP', 'COMM', 'MEM'];
  const COLOR = ['#43a047', '#e53935', '#1e88e5'];
  const SVGNS = 'http://www.w3.org/2000/svg';
  const checks = [];
  // A table of the data block (report_html_tables.cpp) as objects keyed by the report's field
  // keys (analysis/report_fields.hpp); n/a is null.
  function rows(name) {
    const t = D.tables[name];
    return t.rows.map(function (row) {
      const o = {};
      t.keys.forEach(function (k, i) { o[k] = row[i]; });
      return o;
    });
  }
  // Per rank, what the breakdown draws: means per step in ns (n/a as 0), by rank (a paged ranks
  // table comes slowest first).
  // (Read by column index: an object of every field per row costs a third of a second at 16,384.)
  const RANKS = (function () {
    const t = D.tables.ranks;
    const at = function (k) { return t.keys.indexOf(k); };
    const [r, h, step, comp, comm, hidden, mem, idle] = ['rank', 'host', 'step_time_ns',
      'comp_busy_ns', 'comm_busy_ns', 'comm_comp_overlap_ns', 'mem_busy_ns', 'idle_ns'].map(at);
    return t.rows.map(function (row) {
      return { r: row[r], h: row[h], step: row[step] || 0, comp: row[comp] || 0,
        comm: row[comm] || 0, hidden: row[hidden] || 0, mem: row[mem] || 0, idle: row[idle] || 0 };
    }).sort(function (a, b) { return a.r - b.r; });
  })();

  // --- units: as the report's C++ writes them (src/core/units.cpp, report_html_tables.cpp) ---
  // printf's "%.<f>f": like toFixed, but a value exactly halfway rounds to the even digit.
  function fixed(x, f) {
    const a = Math.abs(x);
    const exact = a.toFixed(f + 25);
    const cut = exact.indexOf('.') + 1 + f;
    let out = a.toFixed(f);
    if (/^50*$/.test(exact.slice(cut))) {
      const down = exact.slice(0, f ? cut : cut - 1);
      if (Number(down.slice(-1)) % 2 === 0) out = down;
    }
    return (x < 0 || Object.is(x, -0) ? '-' : '') + out;
  }
  function fmtDur(ns) {
    const a = Math.abs(ns);
    const [v, u] = a >= 1e9 ? [ns / 1e9, 's'] : a >= 1e6 ? [ns / 1e6, 'ms'] :
      a >= 1e3 ? [ns / 1e3, 'µs'] : [ns, 'ns'];
    const d = Math.abs(v);
    return fixed(v, u === 'ns' || d >= 100 ? 0 : d >= 10 ? 1 : 2) + ' ' + u;
  }
  function fmtBytes(b) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    b = Math.trunc(b);
    while (b >= 1024 && i < 4) { b /= 1024; i++; }
    return fixed(b, i === 0 || Number.isInteger(b) ? 0 : 2) + ' ' + units[i];
  }
  // A table cell's text (html_number): v in the unit named as the report's JSON names it.
  function fmtCell(v, unit) {
    if (v === null || v === undefined) return 'n/a';
    if (typeof v === 'string') return v;
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    switch (unit) {
      case 'ns': return fmtDur(v);
      case 'ratio': return fixed(100 * v, 1) + ' %';
      case 'GB/s': return fixed(v, 2) + ' GB/s';
      case 'B': return fmtBytes(v);
      case 'factor': return fixed(v, 3) + 'x';
      default: return fixed(v, 0);
    }
  }
  // The time unit for an axis whose largest value is maxNs.
  function timeUnit(maxNs) {
    return maxNs >= 1e9 ? [1e9, 's'] : maxNs >= 1e6 ? [1e6, 'ms'] : maxNs >= 1e3 ? [1e3, 'µs'] :
      [1, 'ns'];
  }
  // Ticks at 1, 2 or 5 × 10^k covering [lo, hi], about n of them.
  function ticks(lo, hi, n) {
    const range = hi - lo > 0 ? hi - lo : Math.abs(hi) || 1;
    const raw = range / n;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / p;
    const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
    const out = [];
    for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
      out.push(Number(v.toPrecision(12)));
    }
    return out;
  }
  // The first round tick at or above v: the top of an axis that must hold v.
  function niceMax(v) {
    const t = ticks(0, v > 0 ? v : 1, 5);
    const last = t[t.length - 1];
    return last >= v ? last : last + (t[1] - t[0]);
  }
  function num(v) { return String(Number(v.toPrecision(6))); }

  // --- DOM helpers ---------------------------------------------------------------------------
  function el(tag, attrs, parent, text) {
    const e = tag.startsWith('svg:') ? document.createElementNS(SVGNS, tag.slice(4)) :
      document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function title(node, text) { el('svg:title', {}, node, text); }
  const tip = el('div', { id: 'tip', class: 'tip', hidden: '' }, document.body);
  function showTip(lines, x, y) {
    tip.textContent = '';
    lines.forEach(function (l, i) { el(i ? 'div' : 'b', {}, tip, l); });
    tip.hidden = false;
    const w = tip.offsetWidth;
    tip.style.left = Math.min(x + 14, window.scrollX + document.documentElement.clientWidth - w - 8) + 'px';
    tip.style.top = (y + 14) + 'px';
  }
  function hideTip() { tip.hidden = true; }
  function width(container) { return Math.max(480, container.clientWidth); }

  // An SVG chart with a left axis in `unit` and room for labels on every side.
  function chart(container, id, h, m) {
    const w = width(container);
    const s = el('svg:svg', { id: id, class: 'chart', width: w, height: h,
      viewBox: '0 0 ' + w + ' ' + h }, container);
    return { svg: s, w: w, h: h, x0: m.l, x1: w - m.r, y0: h - m.b, y1: m.t };
  }
  function yAxis(c, lo, hi, fmt, label, right) {
    const x = right ? c.x1 : c.x0;
    el('svg:line', { x1: x, x2: x, y1: c.y1, y2: c.y0, class: 'axis' }, c.svg);
    for (const v of ticks(lo, hi, 5)) {
      const y = c.y0 - (v - lo) / (hi - lo) * (c.y0 - c.y1);
      if (!right) el('svg:line', { x1: c.x0, x2: c.x1, y1: y, y2: y, class: 'grid' }, c.svg);
      el('svg:text', { x: right ? x + 6 : x - 6, y: y + 4, 'text-anchor': right ? 'start' : 'end',
        class: 'tick' }, c.svg, fmt(v));
    }
    const ly = (c.y0 + c.y1) / 2;
    const lx = right ? c.w - 12 : 14;
    el('svg:text', { x: lx, y: ly, transform: 'rotate(-90 ' + lx + ' ' + ly + ')',
      'text-anchor': 'middle', class: 'label' }, c.svg, label);
  }
  function xLabel(c, text) {
    el('svg:text', { x: (c.x0 + c.x1) / 2, y: c.h - 6, 'text-anchor': 'middle', class: 'label' },
      c.svg, text);
  }
  function check(id, node) {
    const b = node.getBBox ? node.getBBox() : node.getBoundingClientRect();
    checks.push(id + ' ' + Math.round(b.width) + 'x' + Math.round(b.height) + ' shapes=' +
      node.querySelectorAll('rect,circle,polyline,polygon,path').length);
  }

  // --- per-rank step breakdown ---------------------------------------------------------------
  // More ranks than the plot has room for bars (3 px each): consecutive ranks are grouped, a bar
  // per group of their mean breakdown, its tick at the group's slowest step.
  function rankGroups(width) {
    const per = Math.max(1, Math.ceil(RANKS.length / Math.max(1, Math.floor(width / 3))));
    const out = [];
    for (let i = 0; i < RANKS.length; i += per) {
      const g = RANKS.slice(i, i + per);
      const mean = function (k) {
        let sum = 0;
        for (const r of g) sum += r[k];
        return sum / g.length;
      };
      let worst = g[0];
      for (const r of g) if (r.step > worst.step) worst = r;
      out.push({ first: g[0], last: g[g.length - 1], n: g.length, worst: worst,
        step: worst.step, comp: mean('comp'), comm: mean('comm'), hidden: mean('hidden'),
        mem: mean('mem'), idle: mean('idle') });
    }
    return out;
  }
  function rankBars() {
    const box = document.getElementById('ranks-box');
    if (!RANKS.length) return;
    let max = 1;
    for (const r of RANKS) max = Math.max(max, r.comp + r.comm + r.mem + r.idle, r.step);
    const [div, unit] = timeUnit(max);
    const c = chart(box, 'chart-ranks', 300, { l: 70, r: 20, t: 14, b: 44 });
    const defs = el('svg:defs', {}, c.svg);
    const pat = el('svg:pattern', { id: 'hatch', width: 6, height: 6,
      patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' }, defs);
    el('svg:rect', { width: 6, height: 6, fill: COLOR[1] }, pat);
    el('svg:line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#fff', 'stroke-width': 3 }, pat);
    const hi = niceMax(max / div);
    yAxis(c, 0, hi, num, 'time per step (' + unit + ')');
    const bars = rankGroups(c.x1 - c.x0);
    const grouped = bars.length < RANKS.length;
    const slot = (c.x1 - c.x0) / bars.length;
    const bar = Math.max(1, slot * 0.8);
    const every = Math.ceil(bars.length / Math.max(1, Math.floor((c.x1 - c.x0) / (grouped ? 56 : 28))));
    const py = function (ns) { return (ns / div) / hi * (c.y0 - c.y1); };
    // One path per segment kind, not one element per rank and kind: a thousand ranks stay fast.
    const kinds = [['comp', COLOR[0], 'COMP'], ['hidden', 'url(#hatch)', 'COMM hidden by COMP'],
      ['exposed', COLOR[1], 'COMM exposed'], ['mem', COLOR[2], 'MEM'], ['idle', '#bdbdbd', 'idle']];
    const paths = kinds.map(function () { return []; });
    const steps = [];
    bars.forEach(function (r, i) {
      const x = c.x0 + slot * i + (slot - bar) / 2;
      let y = c.y0;
      [r.comp, r.hidden, r.comm - r.hidden, r.mem, r.idle].forEach(function (ns, k) {
        const h = py(ns);
        if (!(h > 0)) return;
        y -= h;
        paths[k].push('M' + x.toFixed(2) + ' ' + y.toFixed(2) + 'h' + bar.toFixed(2) + 'v' +
          h.toFixed(2) + 'h' + (-bar).toFixed(2) + 'z');
      });
      const ty = (c.y0 - py(r.step)).toFixed(2);
      steps.push('M' + x.toFixed(2) + ' ' + ty + 'h' + bar.toFixed(2));
      if (i % every === 0) {
        el('svg:text', { x: x + bar / 2, y: c.y0 + 14, 'text-anchor': 'middle', class: 'tick' },
          c.svg, String(r.first.r));
      }
    });
    kinds.forEach(function (k, i) {
      if (paths[i].length) el('svg:path', { d: paths[i].join(''), fill: k[1] }, c.svg);
    });
    el('svg:path', { d: steps.join(''), class: 'steptick' }, c.svg);
    c.svg.addEventListener('mouseleave', hideTip);
    c.svg.addEventListener('mousemove', function (ev) {
      const b = c.svg.getBoundingClientRect();
      const r = bars[Math.floor((ev.clientX - b.left - c.x0) / slot)];
      if (!r) { hideTip(); return; }
      const head = r.n === 1 ? ['rank ' + r.first.r + ' (' + r.first.h + '), per step',
        'step ' + fmtDur(r.step)] :
        ['ranks ' + r.first.r + '–' + r.last.r + ' (' + r.n + '), mean per step',
          'slowest: rank ' + r.worst.r + ' (' + r.worst.h + ') step ' + fmtDur(r.step)];
      showTip(head.concat(['COMP ' + fmtDur(r.comp),
        'COMM ' + fmtDur(r.comm) + ', hidden by COMP ' + fmtDur(r.hidden),
        'MEM ' + fmtDur(r.mem), 'idle ' + fmtDur(r.idle)]), ev.pageX, ev.pageY);
    });
    xLabel(c, grouped ? 'rank (bars: groups of ' + Math.ceil(RANKS.length / bars.length) +
      ' consecutive ranks, their mean; tick: their slowest step)' : 'rank');
    check('chart-ranks', c.svg);
    checks.push('chart-ranks bars=' + bars.length + ' ranks=' + RANKS.length);
  }

  // --- busbw against message size ------------------------------------------------------------
  // One series per collective and communicator size, of the sizes with a known bus factor.
  function busbwSeries() {
    const byName = new Map();
    for (const c of rows('collectives')) {
      if (c.busbw_gbps === null || !(c.bytes > 0)) continue;
      const name = c.collective + ' n=' + c.comm_size;
      if (!byName.has(name)) byName.set(name, []);
      byName.get(name).push([c.bytes, c.busbw_gbps]);  // rows come sorted by bytes
    }
    return Array.from(byName, function ([name, points]) { return { name: name, points: points }; });
  }
  function busbwChart() {
    const box = document.getElementById('busbw-box');
    const series = busbwSeries();
    const peak = D.peak_busbw_gbps;
    if (!series.length) { el('p', {}, box, 'No collective with a known bus factor.'); return; }
    let lo = Infinity, hi = -Infinity, top = peak || 0;
    for (const s of series) for (const [b, v] of s.points) {
      lo = Math.min(lo, Math.log2(b)); hi = Math.max(hi, Math.log2(b)); top = Math.max(top, v);
    }
    if (hi <= lo) { lo -= 1; hi += 1; }
    top = niceMax(top * 1.05 || 1);
    const c = chart(box, 'chart-busbw', 300, { l: 70, r: 20, t: 14, b: 44 });
    yAxis(c, 0, top, num, 'busbw (GB/s)');
    const px = function (b) { return c.x0 + 12 + (Math.log2(b) - lo) / (hi - lo) * (c.x1 - c.x0 - 24); };
    const py = function (v) { return c.y0 - v / top * (c.y0 - c.y1); };
    const stride = Math.max(1, Math.ceil((hi - lo) / 8));
    for (let e = Math.ceil(lo); e <= hi; e += stride) {
      el('svg:text', { x: px(Math.pow(2, e)), y: c.y0 + 14, 'text-anchor': 'middle', class: 'tick' },
        c.svg, fmtBytes(Math.pow(2, e)));
    }
    if (peak) {
      el('svg:line', { x1: c.x0, x2: c.x1, y1: py(peak), y2: py(peak),
        class: 'peak' }, c.svg);
      el('svg:text', { x: c.x1 - 4, y: py(peak) - 4, 'text-anchor': 'end', class: 'tick' },
        c.svg, 'peak ' + num(peak) + ' GB/s');
    }
    const palette = ['#e53935', '#1e88e5', '#43a047', '#fb8c00', '#8e24aa', '#00897b', '#6d4c41',
      '#3949ab'];
    const legend = el('p', { class: 'legend' }, box);
    series.forEach(function (s, k) {
      const color = palette[k % palette.length];
      el('svg:polyline', { fill: 'none', stroke: color, points: s.points.map(function (p) {
        return px(p[0]) + ',' + py(p[1]);
      }).join(' ') }, c.svg);
      for (const [b, v] of s.points) {
        const dot = el('svg:circle', { cx: px(b), cy: py(v), r: 3.5, fill: color }, c.svg);
        title(dot, s.name + ', ' + fmtBytes(b) + ': ' + v.toFixed(2) + ' GB/s');
      }
      el('span', { style: 'color:' + color }, legend, '■ ' + s.name + '  ');
    });
    xLabel(c, 'message size (log scale)');
    check('chart-busbw', c.svg);
  }

  // --- per-step trend: warm-up, drift, outliers ---------------------------------------------
  function trendChart() {
    const box = document.getElementById('trend-box');
    const T = D.trend;
    if (!T.length) { el('p', {}, box, 'No steps.'); return; }
    let max = 1;
    for (const t of T) max = Math.max(max, t.max);
    const [div, unit] = timeUnit(max);
    const top = niceMax(max / div * 1.05);
    const c = chart(box, 'chart-trend', 280, { l: 70, r: 64, t: 14, b: 44 });
    const i0 = T[0].i, i1 = Math.max(T[T.length - 1].i, i0 + 1);
    const px = function (i) { return c.x0 + 8 + (i - i0) / (i1 - i0) * (c.x1 - c.x0 - 16); };
    const py = function (ns) { return c.y0 - (ns / div) / top * (c.y0 - c.y1); };
    const warm = T.filter(function (t) { return t.w; });
    if (warm.length) {
      const x = px(warm[warm.length - 1].i) + (px(i0 + 1) - px(i0)) / 2;
      const r = el('svg:rect', { x: c.x0, y: c.y1, width: Math.max(0, x - c.x0),
        height: c.y0 - c.y1, class: 'warmup' }, c.svg);
      title(r, 'warm-up steps (left out of every summary)');
    }
    yAxis(c, 0, top, num, 'step time (' + unit + ')');
    yAxis(c, 0, 100, num, 'overlap (%)', true);
    for (const v of ticks(i0, i1, 8)) {
      if (!Number.isInteger(v)) continue;
      el('svg:text', { x: px(v), y: c.y0 + 14, 'text-anchor': 'middle', class: 'tick' }, c.svg,
        String(v));
    }
    const band = T.map(function (t) { return px(t.i) + ',' + py(t.max); }).concat(
      T.slice().reverse().map(function (t) { return px(t.i) + ',' + py(t.min); }));
    el('svg:polygon', { points: band.join(' '), class: 'band' }, c.svg);
    el('svg:polyline', { points: T.map(function (t) { return px(t.i) + ',' + py(t.mean); }).join(' '),
      class: 'meanline' }, c.svg);
    const ov = T.filter(function (t) { return t.ov !== null; });
    if (ov.length) {
      el('svg:polyline', { points: ov.map(function (t) {
        return px(t.i) + ',' + (c.y0 - t.ov * (c.y0 - c.y1));
      }).join(' '), class: 'ovline' }, c.svg);
    }
    for (const t of T) {
      const dot = el('svg:circle', { cx: px(t.i), cy: py(t.max), r: t.timed ? 3.5 : 2.5,
        class: t.timed ? 'timed' : 'plain' }, c.svg);
      title(dot, 'step ' + t.i + (t.w ? ' (warm-up)' : '') + (t.timed ? ', per-op timed' : '') +
        ': slowest rank ' + t.slow + ' ' + fmtDur(t.max) + ', mean ' + fmtDur(t.mean) +
        ', fastest ' + fmtDur(t.min) + (t.ov !== null ? ', overlap ' + (100 * t.ov).toFixed(1) + '%' : ''));
    }
    xLabel(c, 'step');
    check('chart-trend', c.svg);
  }

  // --- a canvas sized for the screen's pixel density ----------------------------------------
  function canvas(container, id, w, h) {
    const cv = el('canvas', { id: id }, container);
    const dpr = window.devicePixelRatio || 1;
    cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
    cv.style.width = w + 'px'; cv.style.height = h + 'px';
    const g = cv.getContext('2d');
    g.scale(dpr, dpr);
    return [cv, g];
  }
  // What a canvas shows, read back for #render-check: for each band [top, bottom) of CSS pixels
  // (bands in order, top to bottom)
  // between x0 and x1, how many device pixels differ from the band's background colour (a CSS
  // colour '#rrggbb') by more than `minDiff` in some channel. The checks count these, not the data
  // block, so a drawing that puts its rectangles off the canvas or at NaN paints nothing and is
  // seen to.
  function paintedPixels(cv, x0, x1, bands, minDiff) {
    if (!bands.length) return [];
    const dpr = cv.width / parseFloat(cv.style.width);
    const c0 = Math.ceil(x0 * dpr), c1 = Math.min(cv.width, Math.floor(x1 * dpr));
    // Only the rectangle the bands cover is read back.
    const top = Math.max(0, Math.ceil(bands[0].top * dpr));
    const bottom = Math.min(cv.height, Math.floor(bands[bands.length - 1].bottom * dpr));
    if (c1 <= c0 || bottom <= top) return bands.map(function () { return 0; });
    const px = cv.getContext('2d').getImageData(c0, top, c1 - c0, bottom - top).data;
    return bands.map(function (b) {
      const bg = [1, 3, 5].map(function (i) { return parseInt(b.bg.substr(i, 2), 16); });
      const r1 = Math.min(bottom, Math.floor(b.bottom * dpr));
      let n = 0;
      for (let r = Math.max(top, Math.ceil(b.top * dpr)); r < r1; r++) {
        for (let c = c0; c < c1; c++) {
          const i = ((r - top) * (c1 - c0) + (c - c0)) * 4;
          if (Math.abs(px[i] - bg[0]) > minDiff || Math.abs(px[i + 1] - bg[1]) > minDiff ||
              Math.abs(px[i + 2] - bg[2]) > minDiff || px[i + 3] !== 255) {
            n++;
          }
        }
      }
      return n;
    });
  }
  // "drawn what=D/N lanes=P/M pixels=X" (rows= for the heatmap): D of the N items had a rectangle
  // with finite coordinates inside the canvas; P of the M bands that hold items show painted
  // pixels, X of them in those bands.
  function drawnLine(what, drawn, items, counts, withItems) {
    let painted = 0, pixels = 0;
    counts.forEach(function (n, k) {
      if (!withItems[k]) return;  // a rank's header row is no lane of ops
      if (n > 0) painted++;
      pixels += n;
    });
    const bands = withItems.filter(Boolean).length;
    return what + '=' + drawn + '/' + items + ' ' + (what === 'ops' ? 'lanes' : 'rows') + '=' +
      painted + '/' + bands + ' pixels=' + pixels;
  }

  // --- every drawn rank's timeline of one step: zoom, pan, hover -----------------------------
  // The step's critical path (D.timeline.path) is its own lane above the ranks, every segment in
  // time order whichever rank it is on (drawn or folded), and its ops on the drawn ranks are
  // outlined; beside it, the path's time per rank and category.
  const PATH_COLOR = COLOR.concat(['#9e9e9e']);  // COMP, COMM, MEM, host gap
  const PATH_WHAT = CAT.concat(['host gap']);
  const GAP = 3;  // a path segment's category when it is a host gap
  // The timeline's records as report_html.cpp writes them, times in ns from the drawn ranks'
  // earliest start; names and communicators are indexes into TL.names and TL.comms.
  // An op: [start, duration, category, name, bytes, communicator (-1: none), sequence number,
  // on the critical path (1) or not (0)].
  function opOf(a) {
    return { start: a[0], dur: a[1], cat: a[2], name: a[3], bytes: a[4], comm: a[5], seq: a[6],
      onPath: !!a[7] };
  }
  // A path segment: [start, duration, category (GAP: a host gap), rank, name of its op].
  function segmentOf(a) {
    return { start: a[0], dur: a[1], cat: a[2], rank: a[3], name: a[4] };
  }
  // Per drawn rank a header row, then one lane per stream.
  function timelineLanes(TL) {
    const lanes = [];
    for (const r of TL.ranks) {
      lanes.push({ r: r, header: true, ops: [] });
      for (const l of r.lanes) lanes.push({ r: r, stream: l.s, ops: l.ops.map(opOf) });
    }
    return lanes;
  }
  // The canvas's layout: lane height LH, label column L, axis height AX, the path's lane PT
  // above the ranks' (0 without a path), the time area's width W.
  function timelineGeometry(box, nlanes, hasPath) {
    const LH = 18, L = 150, AX = 40;
    const PT = hasPath ? LH + 6 : 0;
    const w = width(box);
    return { LH: LH, L: L, AX: AX, PT: PT, w: w, h: PT + nlanes * LH + AX, W: w - L - 10 };
  }
  function laneBackground(k) { return k % 2 ? '#fafafa' : '#f3f3f3'; }
  // A rectangle from time s lasting d in the view [v0, v1]: its x, width, and whether its
  // coordinates are finite and overlap the time area.
  function spanRect(geo, view, s, d) {
    const sx = geo.W / (view.v1 - view.v0);
    const x = geo.L + (s - view.v0) * sx, ww = Math.max(1, d * sx);
    return { x: x, ww: ww,
      inside: Number.isFinite(x) && Number.isFinite(ww) && x < geo.L + geo.W && x + ww > geo.L };
  }
  // The critical path's lane; returns how many segments got a rectangle inside it.
  function drawPathLane(g, geo, view, segments, names) {
    const LH = geo.LH, L = geo.L;
    let drawn = 0;
    g.fillStyle = '#fff8e1'; g.fillRect(L, 1, geo.W, LH - 2);
    g.fillStyle = '#222'; g.textAlign = 'right';
    g.fillText('critical path', L - 6, LH / 2, L - 10);
    g.save();
    g.beginPath(); g.rect(L, 0, geo.W, LH); g.clip();
    for (const sg of segments) {
      const { x, ww, inside } = spanRect(geo, view, sg.start, sg.dur);
      if (inside) drawn++;
      g.fillStyle = PATH_COLOR[sg.cat];
      g.fillRect(x, 2, ww, LH - 4);
      if (ww > 60) {
        g.fillStyle = '#fff'; g.textAlign = 'left';
        g.fillText('r' + sg.rank + ' ' + (sg.cat === GAP ? 'gap' : names[sg.name]),
          Math.max(x, L) + 3, LH / 2, ww - 6);
      }
    }
    g.restore();
    return drawn;
  }
  function drawRankHeader(g, geo, r, y) {
    g.fillStyle = '#e3e7ee'; g.fillRect(0, y, geo.w, geo.LH);
    g.fillStyle = '#222'; g.textAlign = 'left';
    g.fillText('rank ' + r.r + ' (' + r.h + '): step ' + fmtDur(r.wall) +
      (r.tag ? ', ' + r.tag : ''), 4, y + geo.LH / 2, geo.w - 8);
  }
  // One stream's lane; returns how many of its ops got a rectangle inside it.
  function drawOpLane(g, geo, view, ln, k, names) {
    const LH = geo.LH, L = geo.L, y = geo.PT + k * LH;
    let drawn = 0;
    g.fillStyle = laneBackground(k);
    g.fillRect(L, y + 1, geo.W, LH - 2);
    g.fillStyle = '#222';
    g.textAlign = 'right';
    g.fillText(ln.stream, L - 6, y + LH / 2, L - 10);
    g.save();
    g.beginPath(); g.rect(L, y, geo.W, LH); g.clip();
    for (const op of ln.ops) {
      if (op.start + op.dur < view.v0 || op.start > view.v1) continue;
      const { x, ww, inside } = spanRect(geo, view, op.start, op.dur);
      if (inside) drawn++;
      g.fillStyle = COLOR[op.cat];
      g.fillRect(x, y + 2, ww, LH - 4);
      if (op.onPath) {  // a dark outline
        g.strokeStyle = '#111'; g.lineWidth = 2;
        g.strokeRect(x + 1, y + 3, Math.max(0, ww - 2), LH - 6);
      }
      if (ww > 50) {
        g.fillStyle = '#fff'; g.textAlign = 'left';
        g.fillText(names[op.name], Math.max(x, L) + 3, y + LH / 2, ww - 6);
      }
    }
    g.restore();
    return drawn;
  }
  // Round ticks in the unit that fits the visible range, below lane `nlanes`.
  function drawTimeAxis(g, geo, view, nlanes) {
    const L = geo.L, w = geo.w, sx = geo.W / (view.v1 - view.v0);
    const [div, unit] = timeUnit(view.v1 - view.v0);
    g.fillStyle = '#222'; g.textAlign = 'center'; g.textBaseline = 'top';
    const y = geo.PT + nlanes * geo.LH;
    for (const t of ticks(view.v0 / div, view.v1 / div, 8)) {
      const x = L + (t * div - view.v0) * sx;
      if (x < L - 1 || x > w - 10 + 1) continue;
      g.fillRect(x, y, 1, 5);
      g.fillText(num(t) + ' ' + unit, Math.min(Math.max(x, L + 20), w - 30), y + 7);
    }
    g.textAlign = 'left';
    g.fillText('time since the step began on the earliest drawn rank', L, y + 22);
  }
  // The whole canvas; returns how many ops and path segments got a rectangle inside the lanes.
  function drawTimeline(g, geo, view, lanes, segments, names) {
    let ops = 0, path = 0;
    g.clearRect(0, 0, geo.w, geo.h);
    g.font = '11px sans-serif';
    g.textBaseline = 'middle';
    if (segments) path = drawPathLane(g, geo, view, segments, names);
    lanes.forEach(function (ln, k) {
      if (ln.header) {
        drawRankHeader(g, geo, ln.r, geo.PT + k * geo.LH);
      } else {
        ops += drawOpLane(g, geo, view, ln, k, names);
      }
    });
    drawTimeAxis(g, geo, view, lanes.length);
    return { ops: ops, path: path };
  }
  // The tooltip's lines at time t (within slack) in the path's lane or in lane `ln`; null: none.
  function pathTip(TL, segments, t, slack) {
    let seg = null;
    for (const sg of segments) {
      if (sg.start - slack <= t && t <= sg.start + sg.dur + slack) seg = sg;
    }
    if (!seg) return null;
    const gap = seg.cat === GAP;
    return ['critical path: ' + (gap ? 'host gap before ' : '') + TL.names[seg.name],
      (gap ? 'waiting to launch' : CAT[seg.cat]) + ' on rank ' + seg.rank,
      fmtDur(seg.dur) + ' of the path, from ' + fmtDur(seg.start)];
  }
  function opTip(TL, ln, t, slack) {
    let hit = null;
    for (const op of ln.ops) {
      if (op.start - slack <= t && t <= op.start + op.dur + slack) { hit = op; }
    }
    if (!hit) return null;
    const lines = [TL.names[hit.name], CAT[hit.cat] + ' on ' + ln.stream + ', rank ' + ln.r.r,
      'duration ' + fmtDur(hit.dur), 'starts at ' + fmtDur(hit.start)];
    if (hit.bytes > 0) lines.push(fmtBytes(hit.bytes));
    if (hit.comm >= 0) lines.push('communicator ' + TL.comms[hit.comm] + ', seq ' + hit.seq);
    if (hit.onPath) lines.push('on the critical path');
    return lines;
  }
  // Zoom (wheel, buttons), pan (drag), reset (double click) and hover on the canvas; `draw`
  // redraws after `view` changed.
  function timelineControls(cv, geo, view, lanes, TL, segments, draw) {
    const L = geo.L, span = view.span;
    function at(ev) {
      const b = cv.getBoundingClientRect();
      return [ev.clientX - b.left, ev.clientY - b.top];
    }
    function timeAt(x) { return view.v0 + (x - L) / (geo.w - L - 10) * (view.v1 - view.v0); }
    cv.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      const [x] = at(ev);
      const t = timeAt(Math.max(L, x));
      const f = Math.pow(1.2, ev.deltaY / 100);
      const nv0 = t - (t - view.v0) * f, nv1 = t + (view.v1 - t) * f;
      if (nv1 - nv0 < 100) return;  // 100 ns across the page is enough
      view.v0 = Math.max(-span * 0.05, nv0); view.v1 = Math.min(span * 1.05, nv1);
      draw();
    }, { passive: false });
    let drag = null;
    cv.addEventListener('mousedown', function (ev) { drag = [at(ev)[0], view.v0, view.v1]; });
    window.addEventListener('mouseup', function () { drag = null; });
    cv.addEventListener('dblclick', function () { view.v0 = 0; view.v1 = span; draw(); });
    cv.addEventListener('mouseleave', hideTip);
    cv.addEventListener('mousemove', function (ev) {
      const [x, y] = at(ev);
      if (drag) {
        const dt = (x - drag[0]) / (geo.w - L - 10) * (drag[2] - drag[1]);
        view.v0 = drag[1] - dt; view.v1 = drag[2] - dt;
        draw();
        return;
      }
      const t = timeAt(x), slack = 2 * (view.v1 - view.v0) / (geo.w - L);
      let lines = null;
      if (segments && y < geo.PT) {
        lines = x < L ? null : pathTip(TL, segments, t, slack);
      } else {
        const ln = lanes[Math.floor((y - geo.PT) / geo.LH)];
        lines = !ln || ln.header || x < L ? null : opTip(TL, ln, t, slack);
      }
      if (lines) { showTip(lines, ev.pageX, ev.pageY); } else { hideTip(); }
    });
    for (const [label, f] of [['zoom in', 0.5], ['zoom out', 2], ['reset', 0]]) {
      const b = el('button', { type: 'button' }, document.getElementById('timeline-tools'), label);
      b.addEventListener('click', function () {
        if (!f) { view.v0 = 0; view.v1 = span; } else {
          const m = (view.v0 + view.v1) / 2, half = (view.v1 - view.v0) * f / 2;
          view.v0 = Math.max(-span * 0.05, m - half); view.v1 = Math.min(span * 1.05, m + half);
        }
        draw();
      });
    }
  }
  // The legend under the canvas; with a path, its shares and its lane's check line.
  function timelineLegend(box, cv, geo, PATH, npath, pathDrawn) {
    const legend = el('p', { class: 'legend', id: 'timeline-legend' }, box);
    CAT.forEach(function (c, i) { el('span', { style: 'color:' + COLOR[i] }, legend, '■ ' + c + '  '); });
    if (!PATH) {
      el('span', {}, legend, '(no critical path for this step: report --no-critical-path, or ' +
        'its graph could not be built)');
      return;
    }
    el('span', {}, legend, '▢ outlined: on the critical path (the chain of ops and host gaps ' +
      'the step\'s end waited for; its own lane on top, ');
    el('span', { style: 'color:' + PATH_COLOR[GAP] }, legend, '■ host gap');
    el('span', {}, legend, ')');
    criticalShares(box, PATH);
    const pp = paintedPixels(cv, geo.L, geo.w - 10,
      [{ top: 2, bottom: geo.LH - 2, bg: '#fff8e1' }], 48);
    checks.push('timeline path segments=' + PATH.segments.length + ' ranks=' +
      PATH.shares.length + ' outlined=' + npath + ' drawn=' + pathDrawn + '/' +
      PATH.segments.length + ' pixels=' + pp[0]);
  }
  // The ranks not drawn, slowest first, as a paged table.
  function foldedRanks(box, TL) {
    if (!TL.folded.length) return;
    const det = el('details', {}, box);
    el('summary', {}, det, TL.folded.length + ' more rank(s) folded: step ' + TL.step +
      ' took ' + fmtDur(TL.folded[TL.folded.length - 1][2]) + ' to ' + fmtDur(TL.folded[0][2]) +
      ' on them (slowest first)');
    const tb = el('table', { class: 'sortable', id: 'table-folded' }, det);
    const hr = el('tr', {}, el('thead', {}, tb));
    ['rank', 'host', 'step time'].forEach(function (t) { el('th', {}, hr, t); });
    el('tbody', {}, tb);
    if (TL.folded.length > PAGE) tb.dataset.rows = TL.folded.length;
    pager(tb, TL.folded.length, function (i) {
      const [r, host, wall] = TL.folded[i];
      return [[String(r), r], [host, host], [fmtDur(wall), wall]];
    }, true);
  }
  function timeline() {
    const box = document.getElementById('timeline-box');
    const TL = D.timeline;
    if (!TL || !TL.ranks.length) {
      el('p', {}, box, 'No measured step with per-op timing was read.');
      checks.push('timeline lanes=0 ops=0 ranks=0 folded=0');
      return;
    }
    const PATH = TL.path;
    const segments = PATH ? PATH.segments.map(segmentOf) : null;
    const lanes = timelineLanes(TL);
    let nops = 0, nlanes = 0, npath = 0;
    for (const ln of lanes) {
      if (ln.header) continue;
      nlanes++;
      nops += ln.ops.length;
      npath += ln.ops.filter(function (op) { return op.onPath; }).length;
    }
    const geo = timelineGeometry(box, lanes.length, !!PATH);
    const [cv, g] = canvas(box, 'timeline', geo.w, geo.h);
    const span = Math.max(1, TL.t1 - TL.t0);
    const view = { v0: 0, v1: span, span: span };
    const draw = function () { return drawTimeline(g, geo, view, lanes, segments, TL.names); };
    timelineControls(cv, geo, view, lanes, TL, segments, draw);
    const drawn = draw();
    // Each lane's band where ops are painted, on its background (as drawOpLane fills them). The
    // ops' names are white on them: a pixel counts where it is far from the grey background
    // (more than 48 of 255 in a channel), as every op colour is and white is not.
    const painted = paintedPixels(cv, geo.L, geo.w - 10, lanes.map(function (ln, k) {
      const top = geo.PT + k * geo.LH;
      return { top: top + 2, bottom: top + geo.LH - 2, bg: laneBackground(k) };
    }), 48);
    const probe = timelineProbe(cv, geo, lanes, span);
    timelineLegend(box, cv, geo, PATH, npath, drawn.path);
    foldedRanks(box, TL);
    checks.push('timeline lanes=' + nlanes + ' ops=' + nops + ' ranks=' + TL.ranks.length +
      ' folded=' + TL.folded.length + ' ' + geo.w + 'x' + geo.h);
    checks.push('timeline drawn ' + drawnLine('ops', drawn.ops, nops, painted,
      lanes.map(function (ln) { return ln.ops.length > 0; })));
    if (probe) checks.push(probe);
  }
  // Where the first lane with a wide enough op must show paint and where not, worked out here
  // from its ops' times alone (the first view: 0 to the span across the time area), not with the drawing's
  // geometry (spanRect): each device column a pixel inside an op must be painted, each column
  // clear of every op by a pixel must show the lane's background. An op drawn at the wrong place
  // or length (a time scale off by 2x) paints where it must not or leaves bare where it must
  // paint, which the counts of painted pixels per band do not tell. "timeline probe lane=K
  // inside=A/B outside=C/D": A of the B inside columns painted, C of the D clear ones.
  function timelineProbe(cv, geo, lanes, span) {
    const dpr = cv.width / parseFloat(cv.style.width);
    const c0 = Math.ceil(geo.L * dpr), c1 = Math.floor((geo.L + geo.W) * dpr);
    const per = (c1 - c0) / span;  // device columns per ns
    // The first lane with an op wide enough to have columns inside it (its edges' 2 columns
    // each side are left out), else the first lane with ops: a lane of sub-pixel ops only
    // (a pipeline stage's short transfers) has nothing inside to probe.
    const wide = function (ln) {
      return !ln.header && ln.ops.some(function (op) { return op.dur * per >= 6; });
    };
    let k = lanes.findIndex(wide);
    if (k < 0) k = lanes.findIndex(function (ln) { return !ln.header && ln.ops.length > 0; });
    if (k < 0) return null;
    const top = Math.ceil((geo.PT + k * geo.LH + 2) * dpr);
    const bottom = Math.floor((geo.PT + (k + 1) * geo.LH - 2) * dpr);
    if (c1 <= c0 || bottom <= top) return null;
    const state = new Uint8Array(c1 - c0);  // 0 clear, 1 inside an op, 2 near an op's edge
    const mark = function (from, to, v) {
      for (let c = Math.max(from, c0); c <= Math.min(to, c1 - 1); c++) {
        if (v === 1 || state[c - c0] === 0) state[c - c0] = v;
      }
    };
    const ops = lanes[k].ops;
    for (const op of ops) {  // an op is at least one CSS pixel wide
      const a = c0 + op.start * per, b = a + Math.max(dpr, op.dur * per);
      mark(Math.floor(a) - 2, Math.ceil(b) + 1, 2);
    }
    for (const op of ops) {
      const a = c0 + op.start * per, b = a + Math.max(dpr, op.dur * per);
      mark(Math.ceil(a) + 1, Math.floor(b) - 2, 1);
    }
    const bg = [1, 3, 5].map(function (i) { return parseInt(laneBackground(k).substr(i, 2), 16); });
    const px = cv.getContext('2d').getImageData(c0, top, c1 - c0, bottom - top).data;
    let inside = 0, insidePainted = 0, clear = 0, clearPainted = 0;
    for (let c = 0; c < c1 - c0; c++) {
      if (state[c] === 2) continue;
      let painted = false;
      for (let r = 0; r < bottom - top && !painted; r++) {
        const i = (r * (c1 - c0) + c) * 4;
        painted = Math.abs(px[i] - bg[0]) > 48 || Math.abs(px[i + 1] - bg[1]) > 48 ||
          Math.abs(px[i + 2] - bg[2]) > 48;
      }
      if (state[c] === 1) {
        inside++;
        if (painted) insidePainted++;
      } else {
        clear++;
        if (painted) clearPainted++;
      }
    }
    return 'timeline probe lane=' + k + ' inside=' + insidePainted + '/' + inside + ' outside=' +
      clearPainted + '/' + clear;
  }

  // The path's time per rank and category, most first, as stacked bars: the first
  // SHARE_RANKS ranks each, the rest folded into one bar.
  const SHARE_RANKS = 12;
  function criticalShares(box, PATH) {
    const div0 = el('div', { id: 'critical-shares' }, box);
    el('p', { class: 'hint' }, div0, 'Critical path of step ' + D.timeline.step + ': ' +
      fmtDur(PATH.length) + ' through ' + PATH.shares.length + ' rank(s); its time per rank ' +
      'and category, most first' + (PATH.shares.length > SHARE_RANKS ? ' (' +
      (PATH.shares.length - SHARE_RANKS) + ' more ranks folded into the last bar)' : '') + '.');
    const rowsOf = PATH.shares.slice(0, SHARE_RANKS).map(function (s) {
      return { label: 'rank ' + s[0], t: s.slice(1) };
    });
    if (PATH.shares.length > SHARE_RANKS) {
      const rest = [0, 0, 0, 0];
      for (const s of PATH.shares.slice(SHARE_RANKS)) for (let k = 0; k < 4; k++) rest[k] += s[k + 1];
      rowsOf.push({ label: (PATH.shares.length - SHARE_RANKS) + ' more ranks', t: rest });
    }
    const BH = 16;
    const c = chart(div0, 'chart-critical', rowsOf.length * BH + 40, { l: 110, r: 20, t: 6, b: 34 });
    let top = 1;
    for (const r of rowsOf) top = Math.max(top, r.t[0] + r.t[1] + r.t[2] + r.t[3]);
    const [div, unit] = timeUnit(top);
    const hi = niceMax(top / div);
    const px = function (ns) { return (ns / div) / hi * (c.x1 - c.x0); };
    for (const v of ticks(0, hi, 5)) {
      const x = c.x0 + v / hi * (c.x1 - c.x0);
      el('svg:line', { x1: x, x2: x, y1: c.y1, y2: c.y0, class: 'grid' }, c.svg);
      el('svg:text', { x: x, y: c.y0 + 14, 'text-anchor': 'middle', class: 'tick' }, c.svg, num(v));
    }
    rowsOf.forEach(function (r, i) {
      const y = c.y1 + i * BH;
      el('svg:text', { x: c.x0 - 6, y: y + BH / 2 + 4, 'text-anchor': 'end', class: 'tick' },
        c.svg, r.label);
      let x = c.x0;
      r.t.forEach(function (ns, k) {
        if (!(ns > 0)) return;
        const rect = el('svg:rect', { x: x, y: y + 2, width: Math.max(0.5, px(ns)),
          height: BH - 4, fill: PATH_COLOR[k] }, c.svg);
        title(rect, r.label + ': ' + PATH_WHAT[k] + ' ' + fmtDur(ns) + ' of the path (' +
          fixed(100 * ns / PATH.length, 1) + ' %)');
        x += px(ns);
      });
    });
    el('svg:text', { x: (c.x0 + c.x1) / 2, y: c.h - 4, 'text-anchor': 'middle', class: 'label' },
      c.svg, 'time on the critical path (' + unit + ')');
    check('chart-critical', c.svg);
  }

  // --- straggler heatmap: ranks × collective instances in time order -----------------------
  // A row per rank group (H.groups: [first, last] rows of H.rows; one rank each unless there are
  // more ranks than rows of pixels); a cell [group, column, max, mean, worst rank] is coloured
  // by the largest wait one of its ranks caused.
  function heatmap() {
    const box = document.getElementById('heatmap-box');
    const H = D.heatmap;
    if (!H || !H.cells.length) {
      el('p', {}, box, 'No rank made another wait at a collective.');
      checks.push('heatmap rows=' + (H ? H.rows.length : 0) + ' cols=0 cells=0');
      checks.push('heatmap drawn cells=0/0 rows=0/0 pixels=0');
      return;
    }
    const G = H.groups;
    const binned = G.length < H.rows.length;
    const L = 110, AX = 34;
    const rh = Math.max(1, Math.min(14, Math.floor(520 / G.length)));
    const w = width(box), h = G.length * rh + AX;
    const [cv, g] = canvas(box, 'heatmap', w, h);
    const cw = (w - L - 10) / H.bins.length;
    const grid = new Map();
    // White → amber → dark red, square-root scale, in 256 steps: cells are filled a colour at a
    // time (tens of thousands of cells at 16,384 ranks; a colour set once, not per cell).
    function color(v) {
      const f = Math.round(255 * Math.sqrt(v / H.max)) / 255;
      const r = Math.round(255 - 75 * Math.max(0, f - 0.5) * 2);
      const gr = Math.round(f < 0.5 ? 255 - 120 * f * 2 : 135 - 135 * (f - 0.5) * 2);
      const b = Math.round(f < 0.5 ? 255 - 255 * f * 2 : 0);
      return 'rgb(' + r + ',' + gr + ',' + b + ')';
    }
    g.fillStyle = '#fafafa';
    g.fillRect(L, 0, w - L - 10, G.length * rh);
    let drawn = 0;
    const withCells = G.map(function () { return false; });
    const byColor = new Map();
    for (const cell of H.cells) {
      const [row, col, v] = cell;
      grid.set(row * H.bins.length + col, cell);
      const c = color(v);
      if (!byColor.has(c)) byColor.set(c, new Path2D());
      const x = L + col * cw, y = row * rh, cellw = Math.max(1, cw);
      if ([x, y, cellw].every(Number.isFinite) && x < w - 10 && x + cellw > L && y >= 0 &&
          y < G.length * rh) {
        drawn++;
      }
      byColor.get(c).rect(x, y, cellw, rh);
      withCells[row] = true;
    }
    byColor.forEach(function (path, c) { g.fillStyle = c; g.fill(path); });
    // Read back before the labels and ticks go on: every cell colour, the palest included,
    // differs from the grid's (its red is 255).
    const painted = paintedPixels(cv, L, w - 10, G.map(function (r, k) {
      return { top: k * rh, bottom: (k + 1) * rh, bg: '#fafafa' };
    }), 0);
    function label(k) {
      const [a, b] = G[k];
      return a === b ? 'rank ' + H.rows[a] : 'ranks ' + H.rows[a] + '–' + H.rows[b];
    }
    g.font = '11px sans-serif'; g.fillStyle = '#222'; g.textAlign = 'right';
    g.textBaseline = 'middle';
    const every = Math.ceil(12 / rh);
    G.forEach(function (r, k) {
      // (The first label kept whole inside the canvas where rows are a pixel or two high.)
      if (k % every === 0) g.fillText(label(k), L - 6, Math.max(6, k * rh + rh / 2), L - 8);
    });
    g.textAlign = 'center'; g.textBaseline = 'top';
    const y = G.length * rh;
    for (const t of ticks(0, H.instances, 8)) {
      if (!Number.isInteger(t) || t > H.instances) continue;
      const x = L + t / H.instances * (w - L - 10);
      g.fillRect(x, y, 1, 4);
      g.fillText(String(t), Math.min(Math.max(x, L + 10), w - 24), y + 6);
    }
    g.fillText('collective instances in order of start (' + H.instances + ')', (L + w) / 2, y + 19);
    cv.addEventListener('mouseleave', hideTip);
    cv.addEventListener('mousemove', function (ev) {
      const b = cv.getBoundingClientRect();
      const x = ev.clientX - b.left, yy = ev.clientY - b.top;
      const row = Math.floor(yy / rh), col = Math.floor((x - L) / cw);
      if (x < L || row >= G.length || col >= H.bins.length) { hideTip(); return; }
      const bin = H.bins[col];
      const cell = grid.get(row * H.bins.length + col);
      const size = G[row][1] - G[row][0] + 1;
      const lines = [label(row) + (size > 1 ? ' (' + size + ' ranks)' : '')];
      if (!cell) lines.push('made no one wait');
      else if (size === 1) lines.push('made others wait ' + fmtDur(cell[2]));
      else {
        lines.push('most: rank ' + cell[4] + ' made others wait ' + fmtDur(cell[2]));
        lines.push('mean over the group\'s ranks ' + fmtDur(cell[3]));
      }
      lines.push('instances ' + bin[0] + '–' + bin[1] + ', starting ' + fmtDur(bin[2]) + ' to ' +
        fmtDur(bin[3]) + ' into the run');
      showTip(lines, ev.pageX, ev.pageY);
    });
    const legend = el('p', { class: 'legend' }, box,
      'colour: wait the rank caused others by arriving last, summed per cell; darkest = ' +
      fmtDur(H.max) + (binned ? '. Each row is a group of ' + (G[0][1] - G[0][0] + 1) +
      ' consecutive ranks (more ranks than rows of pixels), coloured by its rank that caused ' +
      'most; hover for that rank and the group\'s mean.' : ''));
    legend.id = 'heatmap-legend';
    checks.push('heatmap rows=' + H.rows.length + ' cols=' + H.bins.length + ' groups=' +
      G.length + ' cells=' + H.cells.length + ' ' + w + 'x' + h);
    checks.push('heatmap drawn ' + drawnLine('cells', drawn, H.cells.length, painted, withCells));
  }

  // --- tables: sortable by a click on a header, numbers by value; long ones paged ------------
  const PAGE = 100;  // report_html_tables.hpp's kHtmlPageRows: the rows written as HTML
  // Pages table `t` (its thead given) over n rows; cellsOf(i): row i's [text, sort value] per
  // column; keyOf(i, column), if given, the sort value alone (not formatting every cell). With `render` it draws the first page now (else the page holds it already). Sorting
  // (t.sortRows) orders all n rows, not just the page shown.
  function pager(t, n, cellsOf, render, keyOf) {
    let order = null, page = 0;
    const pages = Math.ceil(n / PAGE);
    const nav = el('div', { class: 'pager' });
    t.insertAdjacentElement('afterend', nav);
    if (t.parentElement.classList.contains('scroll')) t.parentElement.after(nav);
    const info = el('span', {}, nav);
    function show() {
      const body = t.tBodies[0];
      body.textContent = '';
      const lo = page * PAGE, hi = Math.min(n, lo + PAGE);
      const frag = document.createDocumentFragment();
      for (let k = lo; k < hi; k++) {
        const tr = el('tr', {}, frag);
        for (const [text, v] of cellsOf(order ? order[k] : k)) {
          el('td', typeof v === 'number' ? { 'data-v': v } : {}, tr, text);
        }
      }
      body.appendChild(frag);
      info.textContent = pages > 1 ? 'rows ' + (lo + 1) + '–' + hi + ' of ' + n + ' ' : '';
    }
    if (pages > 1) {
      for (const [label, to] of [['first', function () { return 0; }],
        ['previous', function () { return Math.max(0, page - 1); }],
        ['next', function () { return Math.min(pages - 1, page + 1); }],
        ['last', function () { return pages - 1; }]]) {
        el('button', { type: 'button' }, nav, label).addEventListener('click', function () {
          page = to();
          show();
        });
      }
    }
    t.sortRows = function (col, asc) {
      const keys = new Array(n);
      for (let i = 0; i < n; i++) keys[i] = keyOf ? keyOf(i, col) : cellsOf(i)[col][1];
      order = Array.from({ length: n }, function (_, i) { return i; });
      order.sort(function (a, b) {
        const x = keys[a], y = keys[b];
        if (x === null || y === null) return (x === null) - (y === null);  // n/a last
        const d = typeof x === 'number' && typeof y === 'number' ? x - y :
          String(x).localeCompare(String(y));
        return asc ? d : -d;
      });
      page = 0;
      show();
    };
    if (render) show();
    return pages;
  }
  // Row i of a data-block table as its HTML columns show it (write_cell): [text, sort value].
  function tableCells(T) {
    const unitAt = T.keys.indexOf('unit');
    return function (i) {
      const row = T.rows[i];
      return T.cols.map(function ([f, end, u]) {
        const unit = u === 'unit' ? row[unitAt] : u;
        const a = fmtCell(row[f], unit);
        if (end < 0) return [a, row[f]];
        const b = fmtCell(row[end], unit);
        return [a === b ? a : a + '-' + b, row[end]];
      });
    };
  }
  function sortable() {
    // Long tables: the rest of their rows from the data block. Every table: the script's text of
    // the rows the page holds is the page's own (what later pages show is written alike).
    let cells = 0, mismatched = 0;
    for (const name in D.tables) {
      const T = D.tables[name];
      const t = document.getElementById(T.id);
      if (!t) continue;
      const cellsOf = tableCells(T);
      Array.from(t.tBodies[0].rows).forEach(function (tr, i) {
        cellsOf(i).forEach(function ([text], c) {
          cells++;
          if (!tr.cells[c] || tr.cells[c].textContent !== text) {
            if (mismatched++ < 3) checks.push('table ' + T.id + ' row ' + i + ' column ' + c + ': "' + text + '" drawn, "' + (tr.cells[c] ? tr.cells[c].textContent : '') + '" written');
          }
        });
      });
      if (t.dataset.rows) {
        pager(t, T.rows.length, cellsOf, false, function (i, c) {
          const [f, end] = T.cols[c];
          return T.rows[i][end < 0 ? f : end];
        });
      }
    }
    checks.push('tables formatted cells=' + cells + ' mismatched=' + mismatched);
    document.querySelectorAll('table.sortable').forEach(function (t) {
      t.querySelectorAll('thead th').forEach(function (th, col) {
        th.addEventListener('click', function () {
          const asc = th.dataset.dir !== 'asc';
          t.querySelectorAll('thead th').forEach(function (o) { delete o.dataset.dir; });
          th.dataset.dir = asc ? 'asc' : 'desc';
          if (t.sortRows) { t.sortRows(col, asc); return; }
          const body = t.tBodies[0];
          const rows = Array.from(body.rows);
          const key = function (r) {
            const c = r.cells[col];
            const v = c && c.dataset.v !== undefined ? parseFloat(c.dataset.v) : NaN;
            return isNaN(v) ? (c ? c.textContent : '') : v;
          };
          rows.sort(function (a, b) {
            const x = key(a), y = key(b);
            const d = typeof x === 'number' && typeof y === 'number' ? x - y :
              String(x).localeCompare(String(y));
            return asc ? d : -d;
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
    });
    const all = document.querySelectorAll('table.sortable');
    checks.push('tables ' + all.length);
    all.forEach(function (t) {
      checks.push('table ' + t.id + ' rows=' + (t.dataset.rows || t.tBodies[0].rows.length) +
        (t.dataset.rows ? ' page=' + t.tBodies[0].rows.length : ''));
    });
  }

  for (const f of [rankBars, busbwChart, trendChart, timeline, heatmap, sortable]) {
    try { f(); } catch (e) { checks.push('error in ' + f.name + ': ' + e); }
  }
  // From navigation start to every chart drawn and the page laid out (reading a layout value
  // makes the browser finish it now): what "opens in" means for this page. The mark is what
  // scripts/html-bench.sh times to.
  void document.body.offsetHeight;
  performance.mark('commprof-drawn');
  checks.push('rendered in ' + Math.round(performance.now()) + ' ms');
  document.getElementById('render-check').textContent = checks.join('\n');
})();
