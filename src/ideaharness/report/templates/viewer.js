/* ideaharness per-instance viewer: vanilla JS, no network. Reads the JSON embedded once in the
   application/json script element with id ih-data; renders one page of rows at a time; every text is
   set with textContent (never innerHTML), so data cannot become markup. */
(function () {
  "use strict";
  var node = document.getElementById("ih-data");
  if (!node) { return; }
  var DATA = JSON.parse(node.textContent);
  var JUDG = null;
  /* the judgments are parsed after the first paint (or on the first drill-down, if sooner) */
  function judgmentsData() {
    if (JUDG === null) {
      var j = document.getElementById("ih-judgments");
      JUDG = j ? JSON.parse(j.textContent) : {columns: [], rows: []};
    }
    return JUDG;
  }
  var PROMPTS = null;
  /* prompt hash -> [[role, content], ...], parsed at the first drill-down */
  function promptsData() {
    if (PROMPTS === null) {
      var p = document.getElementById("ih-prompts");
      PROMPTS = p ? JSON.parse(p.textContent) : {};
    }
    return PROMPTS;
  }
  var PAGE = 50;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined) { return "\u2013"; }
    if (typeof v === "number") { return Number.isInteger(v) ? String(v) : v.toFixed(3); }
    if (typeof v === "boolean") { return v ? "yes" : "no"; }
    return String(v);
  }
  /* recorded parse errors (a JSON list of strings) as one text; "\u2013" when there are none */
  function errorsText(v) {
    var list = v;
    if (typeof v === "string") {
      try { list = JSON.parse(v); } catch (e) { return v; }
    }
    if (!Array.isArray(list)) { return v; }
    return list.length ? list.join("; ") : null;
  }
  /* JSON text indented for reading (the text itself when it is not JSON) */
  function pretty(v) {
    if (typeof v !== "string") { return v; }
    try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; }
  }
  function short(v, n) {
    var s = fmt(v);
    return s.length > n ? s.slice(0, n) + "\u2026" : s;
  }
  function colIndex(cols) {
    var out = {};
    for (var i = 0; i < cols.length; i++) { out[cols[i]] = i; }
    return out;
  }
  function compare(a, b) {
    if (a === b) { return 0; }
    if (a === null || a === undefined) { return 1; }
    if (b === null || b === undefined) { return -1; }
    if (typeof a === "number" && typeof b === "number") { return a - b; }
    return String(a) < String(b) ? -1 : 1;
  }

  /* A sortable, filterable table showing one page of rows. spec: {columns: [names], labels,
     rows: [[...]], filter(row) -> bool, onRow(row, index), cellWidth} */
  function PagedTable(root, spec) {
    var self = this;
    self.spec = spec;
    self.page = 0;
    self.sortCol = -1;
    self.sortDir = 1;
    self.order = [];
    var pager = el("div", "ih-pager");
    self.prev = el("button", "ih-prev", "\u2039 previous");
    self.next = el("button", "ih-next", "next \u203a");
    self.info = el("span", "ih-info");
    pager.append(self.prev, self.info, self.next);
    self.prev.addEventListener("click", function () { self.go(self.page - 1); });
    self.next.addEventListener("click", function () { self.go(self.page + 1); });
    var table = el("table", "ih-table");
    var head = el("tr");
    spec.columns.forEach(function (name, i) {
      var th = el("th", "ih-sortable", (spec.labels && spec.labels[i]) || name);
      th.title = "sort by " + ((spec.labels && spec.labels[i]) || name);
      th.addEventListener("click", function () { self.sortBy(i); });
      head.appendChild(th);
    });
    var thead = el("thead");
    thead.appendChild(head);
    self.body = el("tbody");
    table.append(thead, self.body);
    root.append(pager, table);
    self.refresh();
  }
  PagedTable.prototype.refresh = function () {
    var rows = this.spec.rows, filter = this.spec.filter, order = [];
    for (var i = 0; i < rows.length; i++) {
      if (!filter || filter(rows[i], i)) { order.push(i); }
    }
    this.order = order;
    this.applySort();
    this.go(0);
  };
  PagedTable.prototype.applySort = function () {
    if (this.sortCol < 0) { return; }
    var rows = this.spec.rows, d = this.sortDir;
    var c = this.spec.colIdx ? this.spec.colIdx[this.sortCol] : this.sortCol;
    this.order.sort(function (x, y) { return d * compare(rows[x][c], rows[y][c]) || x - y; });
  };
  PagedTable.prototype.sortBy = function (col) {
    this.sortDir = this.sortCol === col ? -this.sortDir : 1;
    this.sortCol = col;
    this.applySort();
    this.go(0);
  };
  PagedTable.prototype.go = function (page) {
    var pages = Math.max(1, Math.ceil(this.order.length / PAGE));
    this.page = Math.min(Math.max(0, page), pages - 1);
    var start = this.page * PAGE, stop = Math.min(this.order.length, start + PAGE);
    var rows = this.spec.rows, spec = this.spec, frag = document.createDocumentFragment();
    for (var k = start; k < stop; k++) {
      var idx = this.order[k], row = rows[idx], tr = el("tr", "ih-row");
      tr.dataset.index = String(idx);
      for (var c = 0; c < spec.columns.length; c++) {
        var value = row[spec.colIdx ? spec.colIdx[c] : c], format = spec.format && spec.format[c];
        var td = el("td", null, short(format ? format(value) : value, spec.cellWidth || 80));
        if (spec.classify) { var cls = spec.classify(row, c); if (cls) { td.className = cls; } }
        tr.appendChild(td);
      }
      if (spec.onRow) {
        tr.addEventListener("click", (function (r, i) { return function () { spec.onRow(r, i); }; })(row, idx));
      }
      frag.appendChild(tr);
    }
    this.body.replaceChildren(frag);
    this.info.textContent = this.order.length
      ? "rows " + (start + 1) + "\u2013" + stop + " of " + this.order.length + " (" + rows.length + " in all)"
      : "no rows match (" + rows.length + " in all)";
    this.prev.disabled = this.page === 0;
    this.next.disabled = this.page >= pages - 1;
  };

  function fillSelect(select, values) {
    values.forEach(function (v) { var o = el("option", null, v); o.value = v; select.appendChild(o); });
  }
  function distinct(rows, col) {
    var seen = {}, out = [];
    for (var i = 0; i < rows.length; i++) {
      var v = rows[i][col];
      if (v !== null && !Object.prototype.hasOwnProperty.call(seen, v)) { seen[v] = 1; out.push(v); }
    }
    return out.sort();
  }
  function byId(id) { return document.getElementById(id); }

  /* ---- run report: instances, judgments, drill-down ---- */
  function setupRun() {
    var inst = DATA.instances, judg = null, JC = null;
    if (!inst || !byId("ih-inst-table")) { return; }
    var IC = colIndex(inst.columns);
    function loadJudgments() {
      if (judg === null) { judg = judgmentsData(); JC = colIndex(judg.columns); }
    }
    var byInstance = null;
    function judgmentsOf(system, instance) {
      loadJudgments();
      if (byInstance === null) {
        byInstance = new Map();
        for (var i = 0; i < judg.rows.length; i++) {
          var r = judg.rows[i], k = r[JC.system] + "\u0000" + r[JC.instance_id];
          var list = byInstance.get(k);
          if (!list) { list = []; byInstance.set(k, list); }
          list.push(i);
        }
      }
      return byInstance.get(system + "\u0000" + instance) || [];
    }

    function field(dl, name, value, pre) {
      dl.appendChild(el("dt", null, name));
      var dd = el("dd");
      dd.appendChild(el(pre ? "pre" : "span", pre ? "ih-pre" : null, fmt(value)));
      dl.appendChild(dd);
    }
    function itemName(id) {
      return id === "target" ? "target (the reference idea)" : String(id);
    }
    /* a parsed ranking of letters, e.g. ["D","A","B","C"], as "D (idea 3) > A (target) > ..." */
    function withItems(parsed, shownItems) {
      var byLetter = {};
      shownItems.forEach(function (s) { byLetter[s[0]] = s[1]; });
      var value = parsed;
      if (typeof value === "string") {
        try { value = JSON.parse(value); } catch (e) { return parsed; }
      }
      if (!Array.isArray(value) || !value.every(function (x) { return byLetter[x] !== undefined; })) {
        return parsed;
      }
      return value.map(function (x) { return x + " (" + itemName(byLetter[x]) + ")"; }).join(" > ") +
        "   [best first; raw: " + JSON.stringify(value) + "]";
    }
    function drill(system, instance, focus) {
      var box = byId("ih-drill");
      box.replaceChildren();
      box.hidden = false;
      box.appendChild(el("h3", null, "Instance " + instance + " \u00b7 " + system));
      var failed = (DATA.failed || {})[system + "\u0000" + instance] || [];
      failed.forEach(function (f) {
        box.appendChild(el("p", "ih-failed", "not done: " + f.step + (f.key ? " [" + f.key + "]" : "") +
          " \u2013 " + f.status + ": " + (f.error || "")));
      });
      var scores = DATA.instance_scores && DATA.instance_scores[system + "\u0000" + instance];
      if (scores) {
        var dl0 = el("dl", "ih-scores");
        Object.keys(scores).forEach(function (m) { field(dl0, m, scores[m]); });
        box.appendChild(dl0);
      }
      var list = judgmentsOf(system, instance);
      if (!list.length) { box.appendChild(el("p", null, "no model judgments recorded for this instance")); }
      list.forEach(function (i) {
        var r = judg.rows[i], ok = r[JC.parse_status] === "ok";
        var truncated = JC.truncated_reasoning !== undefined && r[JC.truncated_reasoning] === true;
        var d = el("details", "ih-step" + (ok ? "" : " ih-bad"));
        d.dataset.index = String(i);
        d.open = i === focus || (!ok && focus === undefined);
        d.appendChild(el("summary", null, r[JC.step] + (r[JC.key] ? " [" + r[JC.key] + "]" : "") + " \u2013 " +
          r[JC.model] + " \u2013 " + (ok ? "parsed" : truncated ? "PARSE FAILURE (ran out of tokens while reasoning)" :
          "PARSE FAILURE") + " \u2013 attempts " + r[JC.attempts]));
        var dl = el("dl");
        field(dl, "parse status", r[JC.parse_status]);
        var shownItems = JC.shown === undefined ? null : r[JC.shown];
        field(dl, "parsed value", shownItems ? withItems(r[JC.parsed], shownItems) : r[JC.parsed], true);
        field(dl, "parse error", errorsText(r[JC.errors]), true);
        if (shownItems) {
          dl.appendChild(el("dt", null, "items shown"));
          var dd = el("dd"), list = el("ol", "ih-shown");
          shownItems.forEach(function (s) {
            list.appendChild(el("li", null, s[0] + " = " + itemName(s[1]) + (s[2] ? ": " + short(s[2], 160) : "")));
          });
          dd.appendChild(list);
          dl.appendChild(dd);
        } else {
          field(dl, "positions shown", r[JC.positions]);
        }
        field(dl, "tokens in / out", fmt(r[JC.tokens_in]) + " / " + fmt(r[JC.tokens_out]));
        field(dl, "latency (s) / cost (USD)", fmt(r[JC.latency_s]) + " / " + fmt(r[JC.cost_usd]));
        field(dl, "prompt hash", r[JC.prompt_hash]);
        d.appendChild(dl);
        /* a system's step (ideas file, command, HTTP service): the prompt is the task JSON it was
           sent, the reply its answer JSON, and a command's stderr is kept beside them */
        var system = JC.system_task !== undefined && r[JC.system_task] === true;
        if (system) { d.classList.add("ih-system-step"); }
        var answer = JC.answer === undefined ? null : r[JC.answer];
        var reasoning = JC.reasoning === undefined ? null : r[JC.reasoning];
        var split = !system && ((answer !== null && answer !== undefined) ||
                                (reasoning !== null && reasoning !== undefined && reasoning !== ""));
        if (split) {
          /* a reasoning model's reply: the answer the parser read, the reasoning apart from it
             (collapsed), and the reply as returned (collapsed) */
          d.appendChild(el("h4", null, "Answer (what the parser read)"));
          var shownAnswer = answer !== null && answer !== undefined ? answer : r[JC.raw_reply];
          d.appendChild(el("pre", "ih-answer", shownAnswer === "" ? "(empty: no answer after the reasoning)" :
                                                                     shownAnswer));
          if (reasoning !== null && reasoning !== undefined && reasoning !== "") {
            var rd = el("details", "ih-reasoning" + (truncated ? " ih-truncated" : ""));
            rd.appendChild(el("summary", null, "Reasoning (" + reasoning.length + " characters" +
              (truncated ? "; ran out of tokens before an answer" : "") + ")"));
            rd.appendChild(el("pre", "ih-reasoning-text", reasoning));
            d.appendChild(rd);
          }
          var raw = el("details", "ih-raw-reply");
          raw.appendChild(el("summary", null, "Raw reply (as returned)"));
          raw.appendChild(el("pre", "ih-raw", r[JC.raw_reply]));
          d.appendChild(raw);
        } else {
          d.appendChild(el("h4", null, system ? "Answer (the JSON the system returned)" : "Raw reply"));
          d.appendChild(el("pre", "ih-raw", system ? pretty(r[JC.raw_reply]) : r[JC.raw_reply]));
        }
        var stderr = JC.stderr === undefined ? null : r[JC.stderr];
        if (stderr !== null && stderr !== undefined && stderr !== "") {
          d.appendChild(el("h4", null, "stderr"));
          d.appendChild(el("pre", "ih-stderr", stderr));
        }
        d.appendChild(el("h4", null, system ? "Task (the JSON sent to the system)" : "Rendered prompt"));
        var messages = promptsData()[r[JC.prompt_hash]];
        if (!messages) {
          d.appendChild(el("pre", "ih-prompt", "(not kept by this run; prompt hash " + r[JC.prompt_hash] + ")"));
        } else {
          messages.forEach(function (m) {
            var box = el("div", "ih-message");
            if (m[0] !== null && !system) { box.appendChild(el("h5", "ih-role", m[0])); }
            box.appendChild(el("pre", system ? "ih-prompt ih-task" : "ih-prompt", system ? pretty(m[1]) : m[1]));
            d.appendChild(box);
          });
        }
        box.appendChild(d);
      });
      box.scrollIntoView({block: "nearest"});
    }

    var iSearch = byId("ih-inst-search"), iSystem = byId("ih-inst-system");
    var iParse = byId("ih-inst-parsefail"), iFailed = byId("ih-inst-failed");
    fillSelect(iSystem, distinct(inst.rows, IC.system));
    var instTable = new PagedTable(byId("ih-inst-table"), {
      columns: inst.columns, labels: inst.labels, rows: inst.rows, cellWidth: 60,
      filter: function (r) {
        var q = iSearch.value.toLowerCase();
        if (q && String(r[IC.instance_id]).toLowerCase().indexOf(q) < 0 &&
            String(r[IC.system]).toLowerCase().indexOf(q) < 0) { return false; }
        if (iSystem.value && r[IC.system] !== iSystem.value) { return false; }
        if (iParse.checked && !(r[IC.parse_failures] > 0)) { return false; }
        if (iFailed.checked && !(r[IC.failed_units] > 0)) { return false; }
        return true;
      },
      classify: function (r) { return r[IC.parse_failures] > 0 || r[IC.failed_units] > 0 ? "ih-badcell" : null; },
      onRow: function (r) { drill(r[IC.system], r[IC.instance_id]); }
    });
    [iSearch, iSystem, iParse, iFailed].forEach(function (c) {
      c.addEventListener(c.tagName === "INPUT" && c.type === "search" ? "input" : "change",
        function () { instTable.refresh(); });
    });

    function setupJudgments() {
      loadJudgments();
      var jSearch = byId("ih-judg-search"), jStep = byId("ih-judg-step"), jParse = byId("ih-judg-parsefail");
      fillSelect(jStep, distinct(judg.rows, JC.step));
      var lower = null;
      var shown = ["system", "step", "instance_id", "key", "model", "parse_status", "errors", "attempts",
                   "tokens_in", "tokens_out", "latency_s", "cost_usd", "raw_reply"];
      var labelOf = {};
      judg.columns.forEach(function (c, i) { labelOf[c] = (judg.labels && judg.labels[i]) || c; });
      var judgTable = new PagedTable(byId("ih-judg-table"), {
        columns: shown, labels: shown.map(function (c) { return labelOf[c]; }),
        colIdx: shown.map(function (c) { return JC[c]; }), rows: judg.rows, cellWidth: 60,
        format: shown.map(function (c) { return c === "errors" ? errorsText : null; }),
        filter: function (r, i) {
          var q = jSearch.value.toLowerCase();
          if (jStep.value && r[JC.step] !== jStep.value) { return false; }
          if (jParse.checked && r[JC.parse_status] === "ok") { return false; }
          if (q) {
            if (lower === null) {  /* built on the first search, reused after */
              lower = judg.rows.map(function (x) {
                return (x[JC.step] + "\u0000" + x[JC.instance_id] + "\u0000" + (x[JC.raw_reply] || "")).toLowerCase();
              });
            }
            if (lower[i].indexOf(q) < 0) { return false; }
          }
          return true;
        },
        classify: function (r) { return r[JC.parse_status] !== "ok" ? "ih-badcell" : null; },
        onRow: function (r, i) { drill(r[JC.system], r[JC.instance_id], i); }
      });
      [jSearch, jStep, jParse].forEach(function (c) {
        c.addEventListener(c.type === "search" ? "input" : "change", function () { judgTable.refresh(); });
      });
      window.ihViewer.judgments = judgTable;
      window.ihJudgmentsReady = performance.now();
    }
    window.ihViewer = {instances: instTable, drill: drill};
    window.setTimeout(setupJudgments, 0);
  }

  /* ---- compare page: per-instance differences ---- */
  function setupDiff() {
    var diff = DATA.diff;
    if (!diff || !byId("ih-diff-table")) { return; }
    var DC = colIndex(diff.columns), metric = byId("ih-diff-metric"), search = byId("ih-diff-search");
    var differ = byId("ih-diff-only");
    fillSelect(metric, distinct(diff.rows, DC.metric));
    var t = new PagedTable(byId("ih-diff-table"), {
      columns: diff.columns, rows: diff.rows, cellWidth: 60,
      filter: function (r) {
        if (metric.value && r[DC.metric] !== metric.value) { return false; }
        if (search.value && String(r[DC.pair_key]).toLowerCase().indexOf(search.value.toLowerCase()) < 0) {
          return false;
        }
        if (differ.checked && !(r[DC.spread] > 0)) { return false; }
        return true;
      }
    });
    metric.addEventListener("change", function () { t.refresh(); });
    differ.addEventListener("change", function () { t.refresh(); });
    search.addEventListener("input", function () { t.refresh(); });
    window.ihDiff = t;
  }

  setupRun();
  setupDiff();
  window.ihReady = performance.now();
})();
