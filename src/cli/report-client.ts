// The script a report page runs in the browser: it reads the page's embedded head (report-page.ts;
// gzipped in a long loop's page), builds the views with DOM calls (text always through textContent, so
// no agent-written string is ever parsed as HTML) and draws the charts with uPlot. The older rows are
// read when asked for. On the dashboard it polls the head again and redraws.
//
// Plain ES5-level JavaScript kept as a string: it is inlined into the page, not run by Node. Its
// non-ASCII characters are \u escapes (the browser reads the same strings): the bundled program stays
// ASCII, which Node reads fastest (see src/cli/program.ts).
export const REPORT_CLIENT_SCRIPT = String.raw`(function () {
  'use strict';
  // Intl back as it was (see UPLOT_INTL_STAND_IN).
  if (window.forgeIntl) {
    window.Intl = window.forgeIntl;
    delete window.forgeIntl;
  }
  var config = JSON.parse(document.getElementById('forge-config').textContent);
  var COLORS = { baseline: '#2563eb', keep: '#16a34a', revert: '#ea580c', crash: '#dc2626',
    tamper: '#9333ea', guard_failed: '#a16207' };
  var LABELS = { baseline: 'baseline', keep: 'kept', revert: 'reverted', crash: 'crash',
    tamper: 'tamper', guard_failed: 'guard failed' };
  var ROLE_COLORS = { doer: '#2563eb', judge: '#16a34a', arbiter: '#ea580c', strategist: '#9333ea' };
  var ROLES = ['doer', 'judge', 'arbiter', 'strategist'];
  var state = { charts: {}, text: null, page: null, liveAt: 0 };
  window.forgeReport = state;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function num(value, digits) {
    if (value === null || value === undefined) return '\u2013';
    return Number(value.toFixed(digits === undefined ? 4 : digits)).toString();
  }
  function usd(value) { return value === null || value === undefined ? '\u2013' : '$' + value.toFixed(2); }
  function pct(value) { return value === null || value === undefined ? '\u2013' : Math.round(value * 100) + '%'; }
  function ms(value) {
    if (value === null || value === undefined) return '\u2013';
    var s = Math.round(value / 1000);
    if (s < 60) return s + 's';
    var m = Math.floor(s / 60);
    if (m < 60) return m + 'm ' + (s % 60) + 's';
    return Math.floor(m / 60) + 'h ' + (m % 60) + 'm';
  }
  function card(parent, label, value, testid) {
    var box = add(parent, el('div', 'card'));
    add(box, el('div', 'card-label', label));
    var v = add(box, el('div', 'card-value', value));
    if (testid) v.setAttribute('data-testid', testid);
  }
  function section(parent, title) {
    var box = add(parent, el('section'));
    add(box, el('h2', null, title));
    return box;
  }
  function chartBox(parent, name) {
    var box = add(parent, el('div', 'chart'));
    box.setAttribute('data-chart', name);
    return box;
  }
  // Iterations and bead positions are whole numbers: no tick at 0.5.
  var WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];
  function width(box) { return Math.max(280, box.clientWidth || 600); }
  // Every chart is as wide as the first: measured once, as each measure lays the page out again.
  var chartWidth = null;
  function plot(name, box, opts, data) {
    if (chartWidth === null) chartWidth = width(box);
    opts.width = chartWidth;
    opts.height = opts.height || 280;
    state.charts[name] = new uPlot(opts, data, box);
  }
  function pointSeries(label, color) {
    return { label: label, stroke: color, fill: color, width: 0, paths: function () { return null; },
      points: { show: true, size: 8, fill: color, stroke: color, filter: distinctPoints } };
  }
  // The points of a series in view, one per pixel of the canvas: a long loop has many more iterations
  // than the chart has pixels across, and a marker drawn over one just like it changes nothing (at
  // 10,000 iterations, drawing each made about a tenth of the page's load). Asked at every draw, so a
  // zoom shows each point again once there is room.
  function distinctPoints(u, si, show) {
    if (!show) return null;
    var span = u.series[si].idxs, xs = u.data[0], ys = u.data[si], scale = u.series[si].scale;
    if (!span) return null;
    var seen = new Set(), drawn = [];
    for (var i = span[0]; i <= span[1]; i++) {
      if (ys[i] === null || ys[i] === undefined) continue;
      var at = Math.round(u.valToPos(xs[i], 'x', true)) * 65536 + Math.round(u.valToPos(ys[i], scale, true));
      if (!seen.has(at)) { seen.add(at); drawn.push(i); }
    }
    return drawn;
  }

  function liveBox(live, phase) {
    var box = el('div', 'live');
    box.setAttribute('data-testid', 'live');
    if (live && live.bead) {
      add(box, el('strong', null, 'Live: '));
      add(box, el('span', 'live-bead', live.bead + (live.title ? ' \u00b7 ' + live.title : '')));
      add(box, el('span', 'live-agent', ' \u00b7 ' + (live.role || 'agent') + ' on ' + (live.agent || '?')));
      var elapsed = add(box, el('span', 'live-elapsed', ''));
      elapsed.setAttribute('data-base', String(live.bead_elapsed_ms || 0));
      state.liveAt = Date.now();
    } else if (live) {
      box.textContent = 'Running (run ' + live.run_id + '), between beads.';
    } else {
      box.textContent = phase ? 'Not running (' + phase + ').' : 'Not running.';
    }
    return box;
  }
  function livePhase(report) { return report.kind === 'loop' ? report.phase.state.replace(/_/g, ' ') : null; }
  function tickElapsed() {
    var node = document.querySelector('.live-elapsed');
    if (!node) return;
    var base = Number(node.getAttribute('data-base'));
    node.textContent = ' \u00b7 ' + ms(base + Date.now() - state.liveAt);
  }

  function renderLoop(root, r, live) {
    var head = add(root, el('header'));
    add(head, el('h1', null, r.subject));
    add(head, el('p', 'sub', 'Loop ' + r.epic + ' \u00b7 ' + r.metric.type + ' metric, ' + r.metric.direction +
      (r.target === null ? '' : ', target ' + r.target) + ' \u00b7 report of ' + r.generated_at));
    if (r.terminal_reason !== null) {
      var end = add(head, el('p', 'terminal', 'Ended: ' + r.terminal_reason));
      end.setAttribute('data-testid', 'terminal');
    }
    add(root, liveBox(live, livePhase(r)));
    tickElapsed();
    var t = r.totals;
    var cards = add(root, el('div', 'cards'));
    card(cards, 'iterations', t.iterations, 'iterations');
    card(cards, 'kept', t.kept, 'kept');
    card(cards, 'reverted', t.reverted, 'reverted');
    card(cards, 'crashed', t.crashed, 'crashed');
    card(cards, 'guard failed', t.guard_failed, 'guard_failed');
    card(cards, 'tamper', t.tampered, 'tampered');
    card(cards, 'keep rate', pct(t.keep_rate), 'keep_rate');
    card(cards, 'baseline \u2192 best', num(t.baseline) + ' \u2192 ' + num(t.best), 'best');
    card(cards, 'cost', usd(t.cost_usd), 'cost');
    card(cards, 'cost per kept improvement', usd(t.cost_per_keep_usd), 'cost_per_keep');
    card(cards, 'time', ms(t.duration_ms), 'duration');

    var cols = r.columns;
    var xs = cols.iter;
    var count = xs.length;
    var decisions = Object.keys(LABELS).filter(function (d) { return cols.decision.indexOf(d) !== -1; });
    var series = [{ label: 'iteration' }];
    var data = [xs];
    decisions.forEach(function (d) {
      series.push(pointSeries(LABELS[d], COLORS[d]));
      // An iteration without a score (a crash) is drawn at the bar it failed to beat.
      data.push(xs.map(function (_, k) {
        return cols.decision[k] !== d ? null : cols.score[k] === null ? cols.best[k] : cols.score[k];
      }));
    });
    series.push({ label: 'best kept', stroke: '#111827', width: 2, paths: uPlot.paths.stepped({ align: 1 }),
      points: { show: false } });
    data.push(cols.best);
    if (r.target !== null) {
      series.push({ label: 'target', stroke: '#6b7280', dash: [6, 4], width: 1, points: { show: false } });
      data.push(xs.map(function () { return r.target; }));
    }
    var scoreBox = chartBox(section(root, 'Score over iterations'), 'score');
    plot('score', scoreBox, { scales: { x: { time: false } }, series: series,
      axes: [{ label: 'iteration', incrs: WHOLE }, { label: 'score' }] }, data);

    var roleBox = section(root, 'Time and cost per iteration, by role');
    var roleSeries = [{ label: 'iteration' }];
    var timeData = [xs];
    var costData = [xs];
    var none = null;
    ROLES.forEach(function (role) {
      roleSeries.push({ label: role, stroke: ROLE_COLORS[role], width: 1.5, points: { show: count < 200 } });
      var figures = cols.roles[role];
      // A role no run log covers is not in the data: its series is empty.
      if (!figures) none = none || xs.map(function () { return null; });
      timeData.push(figures ? figures.ms.map(function (v) { return v === null ? null : v / 1000; }) : none);
      costData.push(figures ? figures.cost_usd : none);
    });
    var roleCards = add(roleBox, el('div', 'cards'));
    ROLES.forEach(function (role) { card(roleCards, role + ' per iteration', ms(t.time_per_iteration_ms[role])); });
    plot('time', chartBox(roleBox, 'time'), { height: 220, scales: { x: { time: false } },
      series: roleSeries, axes: [{ incrs: WHOLE }, { label: 'seconds' }] }, timeData);
    plot('cost', chartBox(roleBox, 'cost'), { height: 220, scales: { x: { time: false } },
      series: roleSeries.map(function (s) { return Object.assign({}, s); }), axes: [{ incrs: WHOLE }, { label: 'USD' }] }, costData);

    // Built detached and attached once: the rows cost one layout, not one each.
    var tableSection = section(root, 'Every iteration');
    var scroll = el('div', 'scroll');
    var table = add(scroll, el('table', 'iterations'));
    var headRow = add(add(table, el('thead')), el('tr'));
    ['#', 'decision', 'score', '\u0394', 'hypothesis and findings', 'commit', 'cost', 'time'].forEach(function (h) {
      add(headRow, el('th', null, h));
    });
    var body = add(table, el('tbody'));
    var addRow = function (parent, i) {
      var row = add(parent, el('tr'));
      row.setAttribute('data-iter', String(i.iter));
      row.setAttribute('data-decision', i.decision);
      add(row, el('td', 'n', i.iter));
      add(add(row, el('td')), el('span', 'badge d-' + i.decision, LABELS[i.decision] || i.decision));
      add(row, el('td', 'n', num(i.score)));
      add(row, el('td', 'n', num(i.delta)));
      var text = add(row, el('td', 'text'));
      add(text, el('div', 'hypothesis', i.hypothesis));
      if (i.reason) add(text, el('div', 'reason', i.reason));
      if (i.findings.length > 0) {
        var details = add(text, el('details'));
        add(details, el('summary', null, i.findings.length + ' findings'));
        var list = add(details, el('ul'));
        i.findings.forEach(function (f) { add(list, el('li', null, f)); });
      } else if (i.findings_count > 0) add(text, el('div', 'reason', i.findings_count + ' findings'));
      add(row, el('td', 'mono', i.sha ? i.sha.slice(0, 10) : ''));
      add(row, el('td', 'n', usd(i.cost_usd)));
      add(row, el('td', 'n', ms(i.duration_ms)));
    };
    var rowsAbove = function (list) {
      var rows = document.createDocumentFragment();
      list.forEach(function (i) { addRow(rows, i); });
      body.insertBefore(rows, body.firstChild);
    };
    // A long loop's table shows its latest iterations; the rest are one click away. (Laying out ten
    // thousand rows costs seconds; the charts above already show every one of them.)
    rowsAbove(r.latest);
    if (r.latest.length < count) {
      var more = add(tableSection, el('p', 'more'));
      more.setAttribute('data-testid', 'more-rows');
      add(more, el('span', null, 'Showing the last ' + r.latest.length + ' of ' + count + ' iterations. '));
      var all = add(more, el('button', null, 'Show all'));
      all.addEventListener('click', function () {
        all.disabled = true;
        olderRows(count - r.latest.length).then(function (older) {
          rowsAbove(older);
          more.remove();
        }, function (error) {
          all.disabled = false;
          add(more, el('span', 'reason', ' The older rows could not be read (' + error.message + ').'));
        });
      });
    }
    add(tableSection, scroll);
    if (r.notices.length > 0) {
      var notes = add(section(root, 'Noticed between iterations'), el('ul'));
      r.notices.forEach(function (n) { add(notes, el('li', null, n.ts + ' ' + n.kind + ': ' + n.message)); });
    }
    var retro = section(root, 'Retrospective');
    add(retro, el('pre', 'retro', r.retrospective === null ? 'No retrospective yet.' : r.retrospective))
      .setAttribute('data-testid', 'retrospective');
  }

  function renderEpic(root, r, live) {
    var head = add(root, el('header'));
    add(head, el('h1', null, r.title));
    add(head, el('p', 'sub', 'Epic ' + r.epic + ' \u00b7 ' + r.runs + ' runs \u00b7 report of ' + r.generated_at));
    if (r.last_run && r.last_run.reason) add(head, el('p', 'terminal', 'Last run: ' + r.last_run.reason +
      (r.last_run.message ? ' \u2013 ' + r.last_run.message : ''))).setAttribute('data-testid', 'terminal');
    add(root, liveBox(live, null));
    tickElapsed();
    var cards = add(root, el('div', 'cards'));
    ['done', 'open', 'in_progress', 'blocked', 'failed'].forEach(function (k) {
      card(cards, k.replace('_', ' '), r.counts[k], k);
    });
    card(cards, 'attempts', r.totals.attempts, 'attempts');
    card(cards, 'time', ms(r.totals.duration_ms), 'duration');
    card(cards, 'cost', usd(r.totals.cost_usd), 'cost');
    var ids = r.beads.map(function (b) { return b.id; });
    var box = chartBox(section(root, 'Time per bead'), 'beads');
    plot('beads', box, { scales: { x: { time: false } },
      series: [{ label: 'bead' }, { label: 'seconds', stroke: '#2563eb', fill: '#93c5fd',
        paths: uPlot.paths.bars({ size: [0.6, 60] }), points: { show: false } }],
      axes: [{ incrs: WHOLE, values: function (u, splits) { return splits.map(function (s) { return ids[s] || ''; }); } },
        { label: 'seconds' }] },
      [ids.map(function (_, k) { return k; }), r.beads.map(function (b) { return b.duration_ms / 1000; })]);
    var table = add(add(section(root, 'Beads'), el('div', 'scroll')), el('table', 'beads'));
    var headRow = add(add(table, el('thead')), el('tr'));
    ['bead', 'state', 'waits for', 'attempts', 'time', 'cost', 'agent', 'gates', 'commit'].forEach(function (h) {
      add(headRow, el('th', null, h));
    });
    var body = add(table, el('tbody'));
    r.beads.forEach(function (b) {
      var row = add(body, el('tr'));
      row.setAttribute('data-bead', b.id);
      row.setAttribute('data-state', b.state);
      var name = add(row, el('td', 'text'));
      add(name, el('div', 'mono', b.id));
      add(name, el('div', null, b.title));
      if (b.last_message) add(name, el('div', 'reason', b.last_message));
      add(add(row, el('td')), el('span', 'badge state-' + b.state, b.state.replace('_', ' ')));
      add(row, el('td', 'mono', b.depends_on.join(', ')));
      add(row, el('td', 'n', b.attempts));
      add(row, el('td', 'n', ms(b.duration_ms)));
      add(row, el('td', 'n', usd(b.cost_usd)));
      add(row, el('td', null, b.agent || ''));
      add(row, el('td', null, b.gates.map(function (g) { return g.gate + (g.ok ? ' \u2713' : ' \u2717'); }).join(' ')));
      add(row, el('td', 'mono', b.commit ? b.commit.slice(0, 10) : ''));
    });
  }

  function render(page) {
    Object.keys(state.charts).forEach(function (k) { state.charts[k].destroy(); });
    state.charts = {};
    chartWidth = null;
    state.page = page;
    var root = document.getElementById('app');
    root.textContent = '';
    document.title = (page.report.kind === 'loop' ? page.report.subject : page.report.title) + ' \u00b7 Forge report';
    if (page.report.kind === 'loop') renderLoop(root, page.report, page.live);
    else renderEpic(root, page.report, page.live);
    root.setAttribute('data-rendered', String(Date.now()));
  }

  // A long loop's data comes gzipped and base64-encoded (see report-html.ts); the browser inflates it,
  // so the first drawing waits for a promise, and data-rendered still marks the views drawn.
  function inflate(base64) {
    var binary = atob(base64);
    var bytes = new Uint8Array(binary.length);
    for (var k = 0; k < binary.length; k += 1) bytes[k] = binary.charCodeAt(k);
    var reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip')).getReader();
    // Decoded chunk by chunk: on a 10,000-iteration page, Response.text() on the same stream took 250 ms
    // from the script's start to the parsed data here, this 185.
    var decoder = new TextDecoder();
    var text = '';
    var next = function (chunk) {
      if (chunk.done) return text + decoder.decode();
      text += decoder.decode(chunk.value, { stream: true });
      return reader.read().then(next);
    };
    return reader.read().then(next);
  }
  // One of the page's data elements as its text (what polls are compared with) and its value.
  function readData(node) {
    if (node.getAttribute('data-encoding') !== 'gzip+base64') {
      var value = JSON.parse(node.textContent);
      // Polls are compared with the dashboard's JSON of the same data; this copy has its < escaped.
      return { text: JSON.stringify(value), value: value };
    }
    return inflate(node.textContent).then(function (text) {
      return { text: text, value: JSON.parse(text) };
    });
  }
  var embedded = document.getElementById('forge-data');
  var packed = embedded.getAttribute('data-encoding') === 'gzip+base64';
  // The first count iterations (those before the rows shown), oldest first: from the page itself, or
  // on the dashboard from its JSON of the whole report, which may have grown since the last poll (the
  // ledger only ever grows at its end).
  function olderRows(count) {
    if (!config.full) {
      return new Promise(function (resolve) { resolve(readData(document.getElementById('forge-older'))); })
        .then(function (data) { return data.value; });
    }
    return fetch(config.full, { cache: 'no-store' }).then(function (response) {
      if (!response.ok) throw new Error('HTTP ' + response.status);
      return response.json();
    }).then(function (page) { return page.report.iterations.slice(0, count); });
  }
  // Never a blank page: what went wrong, and where the same data can be had.
  function unreadable(why) {
    var root = document.getElementById('app');
    root.textContent = '';
    var box = add(root, el('div', 'unreadable'));
    box.setAttribute('data-testid', 'unreadable');
    add(box, el('strong', null, 'This report could not be shown: '));
    add(box, el('span', null, why));
    add(root, el('p', null, 'ralph-loop report ' + config.epic + ' --json prints the same data as JSON.'));
  }

  var first = packed && typeof DecompressionStream === 'undefined'
    ? Promise.resolve(unreadable('its data is compressed and this browser cannot decompress it (it has no ' +
      'DecompressionStream; Chrome 80, Firefox 113 and Safari 16.4 have it).'))
    : new Promise(function (resolve) { resolve(readData(embedded)); }).then(function (data) {
      state.text = data.text;
      render(data.value);
    }, function (error) {
      unreadable('its data could not be read; the file may be cut short or damaged (' + error.message + ')');
    });
  window.addEventListener('resize', function () {
    Object.keys(state.charts).forEach(function (k) {
      var chart = state.charts[k];
      chart.setSize({ width: width(chart.root.parentNode), height: chart.height });
    });
  });
  function sameReport(a, b) {
    var timeless = function (report) { return JSON.stringify(Object.assign({}, report, { generated_at: null })); };
    return timeless(a) === timeless(b);
  }
  if (config.api) {
    setInterval(tickElapsed, 1000);
    var poll = function () {
      fetch(config.api, { cache: 'no-store' }).then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.text();
      }).then(function (text) {
        document.getElementById('status').textContent = '';
        if (text === state.text) return;
        var page = JSON.parse(text);
        state.text = text;
        var shown = document.querySelector('[data-testid="live"]');
        // Only the live bead moved (its time, the report's own time): that box alone is drawn again, so
        // a long loop's page keeps its charts, its rows (Show all too) and where it was scrolled to.
        if (state.page && shown && sameReport(page.report, state.page.report)) {
          state.page = page;
          shown.replaceWith(liveBox(page.live, livePhase(page.report)));
          tickElapsed();
        } else render(page);
      }).catch(function (error) {
        document.getElementById('status').textContent = 'Dashboard unreachable: ' + error.message;
      }).then(function () { setTimeout(poll, config.interval_ms); });
    };
    // After the first data is drawn, so a poll never lands under it.
    first.then(function () { setTimeout(poll, config.interval_ms); });
  }
})();
`;

/**
 * Run just before uPlot's script: while it loads, uPlot sees a stand-in for Intl. uPlot builds an
 * Intl.NumberFormat and reads the time zone from Intl as it loads, and the first Intl object a chromium
 * page makes loads ICU's data: 30-40 ms of a fresh page here, for nothing else on this page uses Intl
 * (it writes its own numbers and has no time axis). The stand-in's numbers are what Intl's en-US
 * format gives: grouped thousands, at most three decimals. The page's script puts Intl back first thing.
 */
export const UPLOT_INTL_STAND_IN = String.raw`(function () {
  'use strict';
  function grouped(value) {
    if (typeof value !== 'number' || !isFinite(value)) return String(value);
    var fixed = Math.abs(value).toFixed(3).replace(/\.?0+$/, '');
    var parts = fixed.split('.');
    var whole = parts[0].replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return (value < 0 && Number(fixed) !== 0 ? '-' : '') + whole + (parts[1] ? '.' + parts[1] : '');
  }
  window.forgeIntl = window.Intl;
  window.Intl = {
    NumberFormat: function () { return { format: grouped }; },
    DateTimeFormat: function () { return { resolvedOptions: function () { return { timeZone: 'UTC' }; } }; }
  };
})();
`;
