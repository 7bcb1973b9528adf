/* fixlore dashboard: filters, charts (Chart.js) and tables over the data embedded in the page.
   Everything is built with textContent: the data holds templates that may contain "<". */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("fixlore-data").textContent);
  var S = D.strings, P = D.patterns, R = D.rules, K = D.countKinds.length;
  var WEEK = 7 * 86400, DAY = 86400, LIMIT = 200, FIX_LIMIT = 100;
  var n = P.id.length;
  var $ = function (id) { return document.getElementById(id); };
  var str = function (i) { return i < 0 ? "" : S[i]; };
  var C = P.counts, cnt = function (i, k) { return C[k][i]; };
  var OFF = 0, ACC = 1, REJ = 2, OK = 3, FAIL = 4, MAN = 5, UNDO = 6;
  var state = { language: "", rule: "", scope: "", kind: "", weeks: 0, q: "", archived: false };
  var hay = null;

  function ruleLabel(r) { var x = R[r]; return (x[1] + " " + x[2]).trim() || "(no rule)"; }
  function day(t) { return t ? new Date(t * 1000).toISOString().slice(0, 10) : ""; }
  function pct(a, b) { return b > 0 ? Math.round((100 * a) / b) + "%" : "–"; }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function cutoff() { return state.weeks ? D.generated - state.weeks * WEEK : -Infinity; }

  /* ---- filters ---- */
  function fillSelect(sel, items) {
    while (sel.options.length > 1) sel.remove(1);
    items.forEach(function (it) { var o = el("option", it[1]); o.value = it[0]; sel.appendChild(o); });
  }
  function languages() {
    var seen = {};
    R.forEach(function (r) { seen[r[0]] = 1; });
    return Object.keys(seen).sort().map(function (l) { return [l, l]; });
  }
  function rulesFor(lang) {
    var out = [];
    R.forEach(function (r, i) { if (!lang || r[0] === lang) out.push([String(i), (lang ? "" : r[0] + ": ") + ruleLabel(i)]); });
    return out.sort(function (a, b) { return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0; });
  }
  function buildHay() {
    hay = new Array(n);
    for (var i = 0; i < n; i++) {
      hay[i] = [P.id[i], R[P.rule[i]].join(" "), str(P.cat[i]), str(P.msg[i]), str(P.title[i]), str(P.before[i]), str(P.after[i]), str(P.unit[i])].join("\n").toLowerCase();
    }
  }
  function ruleOk(r) {
    if (state.language && R[r][0] !== state.language) return false;
    if (state.rule !== "" && r !== +state.rule) return false;
    return true;
  }
  function patternOk(i, cut) {
    if (!ruleOk(P.rule[i])) return false;
    if (state.scope !== "" && P.scope[i] !== +state.scope) return false;
    if (state.kind && (P.fix[i] === 1) !== (state.kind === "fix")) return false;
    if (!state.archived && P.archived[i] !== -1) return false;
    if (P.last[i] < cut) return false;
    if (state.q && hay[i].indexOf(state.q) < 0) return false;
    return true;
  }

  /* ---- charts ---- */
  var charts = {};
  function mark(canvas, chart) {
    canvas.dataset.series = JSON.stringify(chart.data.datasets.map(function (d) { return d.label; }));
    canvas.dataset.points = JSON.stringify(chart.data.datasets.map(function (d) {
      return d.data.reduce(function (a, v) { return v === null ? a : a + 1; }, 0);
    }));
    canvas.dataset.totals = JSON.stringify(chart.data.datasets.map(function (d) {
      return d.data.reduce(function (a, v) { return v === null ? a : a + v; }, 0);
    }));
    canvas.dataset.labels = String(chart.data.labels.length);
  }
  function chart(id, config) {
    var canvas = $(id);
    if (!charts[id]) {
      config.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options || {});
      charts[id] = new Chart(canvas, config);
    } else {
      charts[id].data = config.data;
      charts[id].update("none");
    }
    mark(canvas, charts[id]);
  }
  function weekAxis(weeks) {
    if (!weeks.length) return { labels: [], index: {} };
    var lo = Math.min.apply(null, weeks), hi = Math.max.apply(null, weeks), labels = [], index = {};
    for (var w = lo; w <= hi; w++) { index[w] = labels.length; labels.push(day(w * WEEK)); }
    return { labels: labels, index: index };
  }

  function render() {
    var cut = cutoff(), cutWeek = state.weeks ? Math.floor(cut / WEEK) : -Infinity;
    if (state.q && !hay) buildHay();
    var rows = [], matchRules = state.q ? {} : null;
    for (var i = 0; i < n; i++) if (patternOk(i, cut)) { rows.push(i); if (matchRules) matchRules[P.rule[i]] = 1; }
    var trendScopeOk = state.scope === "" || +state.scope === D.scopes.indexOf("user");
    var trendRule = function (r) { return trendScopeOk && ruleOk(r) && (!matchRules || matchRules[r]); };

    /* trends: accepted/rejected/by hand and learned-fix success per week */
    var T = D.trend, TC = D.trendColumns.length, weeks = {}, acc = {}, rej = {}, man = {}, ok = {}, bad = {};
    for (var t = 0; t < T.length; t += TC) {
      var r = T[t], fix = T[t + 1], w = T[t + 2];
      if (w < cutWeek || !trendRule(r)) continue;
      if (state.kind && (fix === 1) !== (state.kind === "fix")) continue;
      weeks[w] = 1;
      acc[w] = (acc[w] || 0) + T[t + 3]; rej[w] = (rej[w] || 0) + T[t + 4]; man[w] = (man[w] || 0) + T[t + 7];
      if (fix === 1) { ok[w] = (ok[w] || 0) + T[t + 5]; bad[w] = (bad[w] || 0) + T[t + 6]; }
    }
    var E = D.effect, EC = D.effectColumns.length, lists = {}, first = {};
    for (var e = 0; e < E.length; e += EC) {
      var er = E[e], ew = E[e + 1];
      if (ew < cutWeek || !trendRule(er) || state.kind === "fix") continue;
      weeks[ew] = 1; lists[ew] = (lists[ew] || 0) + E[e + 2]; first[ew] = (first[ew] || 0) + E[e + 3];
    }
    var axis = weekAxis(Object.keys(weeks).map(Number));
    var weekOf = Object.keys(axis.index).map(Number).sort(function (a, b) { return a - b; });
    var series = function (f) { return weekOf.map(f); };
    chart("chart-decisions", {
      type: "bar",
      data: { labels: axis.labels, datasets: [
        { label: "accepted", data: series(function (w) { return acc[w] || 0; }), backgroundColor: "#2da44e" },
        { label: "rejected", data: series(function (w) { return rej[w] || 0; }), backgroundColor: "#cf222e" },
        { label: "fixed by hand", data: series(function (w) { return man[w] || 0; }), backgroundColor: "#8250df" }
      ] },
      options: { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } }
    });
    var rate = function (a, b) { return function (w) { var x = a[w] || 0, y = b(w); return y > 0 ? Math.round((1000 * x) / y) / 10 : null; }; };
    chart("chart-effect", {
      type: "line",
      data: { labels: axis.labels, datasets: [
        { label: "learned-fix success %", data: series(rate(ok, function (w) { return (ok[w] || 0) + (bad[w] || 0); })), borderColor: "#1f6feb", backgroundColor: "#1f6feb", spanGaps: true, pointRadius: 4 },
        { label: "choice already first %", data: series(rate(first, function (w) { return lists[w] || 0; })), borderColor: "#bf8700", backgroundColor: "#bf8700", spanGaps: true, pointRadius: 4 }
      ] },
      options: { scales: { y: { min: 0, max: 100 } } }
    });
    $("trend-note").textContent = trendScopeOk ? "" : "Trends are kept for the user store only.";

    /* patterns by rule: chart, table */
    var groups = {}, perRule = {};
    rows.forEach(function (i) {
      var key = P.scope[i] + "|" + P.rule[i] + "|" + P.fix[i], g = groups[key];
      if (!g) g = groups[key] = { scope: P.scope[i], rule: P.rule[i], fix: P.fix[i], n: 0, c: [0, 0, 0, 0, 0, 0, 0], first: Infinity, last: 0 };
      g.n++;
      for (var k = 0; k < K; k++) g.c[k] += cnt(i, k);
      if (P.first[i] < g.first) g.first = P.first[i];
      if (P.last[i] > g.last) g.last = P.last[i];
      var pr = perRule[P.rule[i]] || (perRule[P.rule[i]] = [0, 0]);
      pr[P.fix[i]]++;
    });
    var top = Object.keys(perRule).map(Number).sort(function (a, b) { return perRule[b][0] + perRule[b][1] - perRule[a][0] - perRule[a][1]; }).slice(0, 15);
    chart("chart-rules", {
      type: "bar",
      data: { labels: top.map(ruleLabel), datasets: [
        { label: "learned fixes", data: top.map(function (r) { return perRule[r][1]; }), backgroundColor: "#1f6feb" },
        { label: "preferences", data: top.map(function (r) { return perRule[r][0]; }), backgroundColor: "#bf8700" }
      ] },
      options: { indexAxis: "y", scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true, ticks: { autoSkip: false } } } }
    });
    var list = Object.keys(groups).map(function (k) { return groups[k]; });
    list.sort(function (a, b) { return (b.c[ACC] + b.c[MAN]) - (a.c[ACC] + a.c[MAN]) || b.n - a.n; });
    var tbody = $("rules-table").tBodies[0];
    tbody.textContent = "";
    list.slice(0, LIMIT).forEach(function (g) {
      var tr = el("tr");
      tr.dataset.rule = ruleLabel(g.rule);
      tr.dataset.language = R[g.rule][0];
      [D.scopes[g.scope], R[g.rule][0], ruleLabel(g.rule), g.fix ? "learned fix" : "preference"].forEach(function (v) { tr.appendChild(el("td", v)); });
      [g.n, g.c[OFF], g.c[ACC], g.c[REJ], g.c[MAN], pct(g.c[ACC] + g.c[MAN], g.c[ACC] + g.c[MAN] + g.c[REJ] + g.c[UNDO]), pct(g.c[OK], g.c[OK] + g.c[FAIL])]
        .forEach(function (v) { tr.appendChild(el("td", v, "n")); });
      tr.appendChild(el("td", day(g.first))); tr.appendChild(el("td", day(g.last)));
      tbody.appendChild(tr);
    });
    $("rules-table").dataset.rows = String(list.length);
    $("rules-more").textContent = list.length > LIMIT ? "Showing " + LIMIT + " of " + list.length + " groups; narrow the filters to see the rest." : "";

    /* learned fixes */
    var fixes = rows.filter(function (i) { return P.fix[i] === 1; });
    fixes.sort(function (a, b) { return (cnt(b, ACC) + cnt(b, MAN)) - (cnt(a, ACC) + cnt(a, MAN)) || P.last[b] - P.last[a]; });
    renderFixes($("fixes"), fixes, {});
    $("fixes").dataset.count = String(fixes.length);
    $("fixes-more").textContent = fixes.length > FIX_LIMIT ? "Showing " + FIX_LIMIT + " of " + fixes.length + " learned fixes (most used first)." : (fixes.length ? "" : "No learned fix matches.");

    /* anti-patterns, pruning */
    var anti = D.antiPatterns.filter(function (i) { return patternOk(i, cut); });
    renderFixes($("anti"), anti, { bad: true });
    $("anti").dataset.count = String(anti.length);
    $("anti-more").textContent = anti.length ? (anti.length > FIX_LIMIT ? "Showing " + FIX_LIMIT + " of " + anti.length + "." : "") : "None: no learned fix keeps failing.";
    var prune = [], PR = D.pruning, PC = D.pruningColumns.length;
    for (var q = 0; q < PR.length; q += PC) if (patternOk(PR[q], cut)) prune.push([PR[q], PR[q + 1]]);
    var pb = $("prune-table").tBodies[0];
    pb.textContent = "";
    prune.slice(0, LIMIT).forEach(function (p) {
      var i = p[0], tr = el("tr");
      [P.id[i], D.scopes[P.scope[i]], R[P.rule[i]][0] + " " + ruleLabel(P.rule[i]), P.fix[i] ? "learned fix" : "preference", str(p[1]), day(P.last[i])]
        .forEach(function (v) { tr.appendChild(el("td", v)); });
      pb.appendChild(tr);
    });
    $("prune-table").dataset.rows = String(prune.length);
    $("prune-more").textContent = prune.length > LIMIT ? "Showing " + LIMIT + " of " + prune.length + "." : (prune.length ? "" : "Nothing to prune.");
    $("prune-note").textContent = "What the next `fixlore knowledge prune` would archive: success below " + D.prune.minSuccess +
      " after " + D.prune.minUses + " verified uses, or unused for " + D.prune.maxIdleDays + " days.";

    /* summary cards */
    var tot = [0, 0, 0, 0, 0, 0, 0], nfix = 0;
    rows.forEach(function (i) { for (var k = 0; k < K; k++) tot[k] += cnt(i, k); nfix += P.fix[i]; });
    var L = 0, F = 0;
    Object.keys(lists).forEach(function (w) { L += lists[w]; F += first[w]; });
    var cards = $("cards");
    cards.textContent = "";
    [["patterns", rows.length], ["learned fixes", nfix], ["preferences", rows.length - nfix],
     ["acceptance", pct(tot[ACC] + tot[MAN], tot[ACC] + tot[MAN] + tot[REJ] + tot[UNDO])],
     ["fix success", pct(tot[OK], tot[OK] + tot[FAIL])], ["choice already first", pct(F, L)],
     ["anti-patterns", anti.length], ["to prune", prune.length]].forEach(function (c) {
      var d = el("div", null, "card"); d.dataset.name = c[0];
      d.appendChild(el("b", c[1])); d.appendChild(el("span", c[0])); cards.appendChild(d);
    });
    document.body.dataset.shown = String(rows.length);
    $("empty").hidden = n > 0;
  }

  function renderFixes(box, items, opts) {
    box.textContent = "";
    items.slice(0, FIX_LIMIT).forEach(function (i) {
      var d = el("div", null, opts.bad ? "fix bad" : "fix");
      d.dataset.id = P.id[i];
      d.appendChild(el("h3", R[P.rule[i]][0] + " · " + ruleLabel(P.rule[i]) + (str(P.msg[i]) ? ": " + str(P.msg[i]) : "")));
      var shape = el("div", null, "shape");
      shape.appendChild(el("pre", str(P.before[i]) || "(nothing)", "before"));
      shape.appendChild(el("span", "→", "arrow"));
      shape.appendChild(el("pre", str(P.after[i]) || "(nothing)", "after"));
      d.appendChild(shape);
      d.appendChild(el("div", [
        str(P.cat[i]) + " of " + (str(P.unit[i]) || "?") + " at " + (str(P.anchor[i]) || "?"),
        "used " + (cnt(i, ACC) + cnt(i, MAN)) + " (accepted " + cnt(i, ACC) + ", by hand " + cnt(i, MAN) + ")",
        "worked " + cnt(i, OK) + ", failed " + cnt(i, FAIL) + ", undone " + cnt(i, UNDO),
        day(P.first[i]) + " … " + day(P.last[i]) + " in " + P.ws[i] + " workspace(s)",
        D.scopes[P.scope[i]] + " · " + P.id[i] + (P.archived[i] !== -1 ? " · archived: " + str(P.archived[i]) : "")
      ].join(" · "), "evidence"));
      box.appendChild(d);
    });
  }

  /* ---- wiring ---- */
  fillSelect($("f-language"), languages());
  fillSelect($("f-rule"), rulesFor(""));
  fillSelect($("f-scope"), D.scopes.map(function (s, i) { return [String(i), s]; }));
  var timer = null;
  function onChange(ev) {
    var id = ev.target.id;
    if (id === "f-language") { state.language = ev.target.value; state.rule = ""; fillSelect($("f-rule"), rulesFor(state.language)); }
    if (id === "f-rule") state.rule = ev.target.value;
    if (id === "f-scope") state.scope = ev.target.value;
    if (id === "f-kind") state.kind = ev.target.value;
    if (id === "f-time") state.weeks = +ev.target.value;
    if (id === "f-archived") state.archived = ev.target.checked;
    if (id === "f-search") {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = $("f-search").value.trim().toLowerCase(); render(); }, 120);
      return;
    }
    render();
  }
  $("filters").addEventListener("change", onChange);
  $("filters").addEventListener("input", function (ev) { if (ev.target.id === "f-search") onChange(ev); });
  $("filters").addEventListener("submit", function (ev) { ev.preventDefault(); });
  var st = D.store;
  $("generated").textContent = "Generated " + new Date(D.generated * 1000).toLocaleString() + " · " +
    st.patterns + " learned patterns in the user store (" + st.archived + " archived), " + st.events + " events, " +
    st.lists + " code-action lists decided";
  if (typeof Chart !== "undefined") {
    Chart.defaults.color = getComputedStyle(document.body).color;
  }
  render();
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";

  /* ---- live refresh (fixlore dashboard --serve) ---- */
  var live = document.body.dataset.live;
  if (live) {
    var seen = null;
    setInterval(function () {
      fetch(live, { cache: "no-store" }).then(function (r) { return r.text(); }).then(function (rev) {
        if (seen === null) { seen = rev; document.body.dataset.revision = rev; } else if (rev !== seen) location.reload();
      }).catch(function () { /* the server has stopped: keep showing what we have */ });
    }, 2000);
  }
})();
