"use strict";
(function () {
  var FORMS = ["quick", "deep"];

  // Quick learn / Deep read: the form lives in the URL, so a link can open either.
  // A link to a section that only one form has (06-kv-cache.html#the-ladder) opens that form; in
  // the edition, #d06-deep opens document 06 in its deep read.
  function named() {
    var hash = decodeURIComponent(location.hash.replace("#", ""));
    var inEdition = /^(d\d\d)-(quick|deep)$/.exec(hash);
    if (inEdition) return { form: inEdition[2], id: inEdition[1] };
    if (FORMS.indexOf(hash) >= 0) return { form: hash, id: null };
    return { form: null, id: hash || null };
  }

  function currentForm() {
    var wanted = named();
    if (wanted.form) return wanted.form;
    var target = wanted.id && document.getElementById(wanted.id);
    var form = target && target.closest("[data-form]");
    return form ? form.getAttribute("data-form") : null;
  }

  function sectionNamed() {
    var id = named().id;
    return id ? document.getElementById(id) : null;
  }

  // The document being read: in the edition, switching form keeps the reader in it.
  function documentInView() {
    var articles = Array.from(document.querySelectorAll("article.document"));
    var bar = document.querySelector(".topbar");
    var edge = (bar ? bar.getBoundingClientRect().bottom : 0) + 120;
    return articles.filter(function (a) { return a.getBoundingClientRect().top <= edge; }).pop() || null;
  }

  function showForm(form) {
    document.body.setAttribute("data-form", form);
    document.querySelectorAll("[data-form-link]").forEach(function (link) {
      if (link.classList.contains("other-form")) {
        var other = form === "quick" ? "deep" : "quick";
        link.setAttribute("href", "#" + other);
        link.setAttribute("data-form-link", other);
        link.textContent = link.getAttribute("data-" + form + "-text");
      } else {
        link.setAttribute("aria-current", String(link.getAttribute("data-form-link") === form));
      }
    });
    document.querySelectorAll(".form-name").forEach(function (label) {
      label.textContent = label.getAttribute("data-" + form);
    });
    window.dispatchEvent(new Event("resize"));
    redrawPending();
  }

  // Following a form link can scroll the page before hashchange fires: note where the reader was.
  var readingWhenClicked = null;
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-form-link]")) readingWhenClicked = documentInView();
  }, true);

  function onHash(scroll) {
    var form = currentForm();
    if (!form) return;
    var reading = readingWhenClicked || documentInView();
    readingWhenClicked = null;
    showForm(form);
    var section = sectionNamed() || reading;
    if (section) section.scrollIntoView();
    else if (scroll) window.scrollTo(0, 0);
  }

  // Animated figures step through their rows; reduced motion and print show the whole picture.
  var STEP_MS = 1400;
  var reduced = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function animate(figure) {
    var total = Number(figure.getAttribute("data-steps"));
    var items = figure.querySelectorAll("ol > li");
    var button = figure.querySelector(".anim-toggle");
    var step = 0;
    var timer = null;

    function paint() {
      figure.querySelectorAll("[data-step]").forEach(function (row) {
        var n = Number(row.getAttribute("data-step"));
        row.classList.toggle("hidden", n > step);
        row.classList.toggle("current", n === step);
      });
      items.forEach(function (item, i) {
        item.classList.toggle("current", i + 1 === step);
        item.classList.toggle("done", i + 1 < step);
        if (i + 1 === step) item.setAttribute("aria-current", "step");
        else item.removeAttribute("aria-current");
      });
    }
    function tick() {
      step = step >= total + 1 ? 1 : step + 1;
      paint();
    }
    function play() {
      figure.classList.add("playing");
      button.textContent = "Pause";
      if (!timer) timer = window.setInterval(tick, STEP_MS);
      tick();
    }
    function halt() {
      window.clearInterval(timer);
      timer = null;
      button.textContent = "Play";
    }
    // Paused, the figure shows its whole picture; stepped, it holds the step the reader chose. From
    // the whole picture, stepping forward starts at the first step and stepping back at the last.
    function stop() {
      halt();
      figure.classList.remove("playing");
    }
    function stepBy(delta) {
      var from = figure.classList.contains("playing") ? Math.min(step, total) : (delta > 0 ? 0 : total + 1);
      halt();
      figure.classList.add("playing");
      step = Math.min(total, Math.max(1, from + delta));
      paint();
    }
    button.addEventListener("click", function () { timer ? stop() : play(); });
    figure.querySelector(".anim-back").addEventListener("click", function () { stepBy(-1); });
    figure.querySelector(".anim-forward").addEventListener("click", function () { stepBy(1); });
    window.addEventListener("beforeprint", stop);
    play();
  }

  function runScript(bytes) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
      script.onload = resolve;
      script.onerror = function () { reject(new Error("an embedded script did not run")); };
      document.head.appendChild(script);
    });
  }

  // A chart redraws only when its curves change, and only where the reader can see it: Plotly takes
  // tens of ms per chart, so one out of view (below the fold, or in the other form) keeps its new
  // curves until it scrolls into view or the browser is idle, and a recompute's figures are not held
  // up by charts the reader cannot see. Printing draws every chart first.
  var chartsInView = new Set();
  // A chart coming into view tells the page (its calculator may owe it curves: calculator.js).
  var watcher = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) chartsInView.add(entry.target); else chartsInView.delete(entry.target);
      if (!entry.isIntersecting) return;
      if (entry.target.pendingCurves) redraw(entry.target, entry.target.pendingCurves);
      entry.target.dispatchEvent(new CustomEvent("runbook-chart-in-view", { bubbles: true }));
    });
  }) : null;
  function chartInView(node) { return !watcher || chartsInView.has(node); }
  var idleScheduled = false;
  var whenIdle = window.requestIdleCallback
    ? function (task) { window.requestIdleCallback(task, { timeout: 1000 }); }
    : function (task) { window.setTimeout(task, 50); };

  function drawWhenIdle() {
    if (idleScheduled) return;
    idleScheduled = true;
    whenIdle(function () { idleScheduled = false; redrawPending(true); });
  }

  function redraw(node, curves, now) {
    var key = JSON.stringify(curves);
    if (key === node.drawnCurves) {
      node.pendingCurves = null;
      return;
    }
    if (!window.Plotly || !node.data || node.offsetParent === null) {
      node.pendingCurves = curves;
      return;
    }
    if (!now && watcher && !chartsInView.has(node)) {
      node.pendingCurves = curves;
      drawWhenIdle();
      return;
    }
    node.pendingCurves = null;
    node.drawnCurves = key;
    // Restyling x makes Plotly guess each axis's type again (numbers turn a category axis linear), and
    // an axis left with no data keeps its old range: give every axis its drawn type back, and let each
    // one that was autoranged fit the new curves.
    var axes = {};
    Object.keys(node.layout).forEach(function (key) {
      var axis = node.layout[key];
      if (!/^[xy]axis\d*$/.test(key) || !axis) return;
      if (axis.type) axes[key + ".type"] = axis.type;
      if (axis.autorange !== false) axes[key + ".autorange"] = true;
    });
    window.Plotly.update(node, {
      x: curves.map(function (c) { return c.x; }),
      y: curves.map(function (c) { return c.y; }),
      name: curves.map(function (c) { return c.name; }),
    }, axes);
  }

  function redrawPending(now) {
    document.querySelectorAll("[data-chart]").forEach(function (node) {
      if (node.pendingCurves) redraw(node, node.pendingCurves, now);
    });
  }

  // Charts keep the light colours calc gave them; the dark theme names a stand-in for each colour
  // as the CSS variable --chart-RRGGBB (runbook.css), read when a chart is drawn. Print is light.
  var printing = false;
  function standIn(hex, style) {
    return (style && style.getPropertyValue("--chart-" + hex.toLowerCase()).trim()) || null;
  }
  function themed(value, style) {
    if (typeof value === "string" && /^#[0-9a-f]{6}$/i.test(value)) return standIn(value.slice(1), style) || value;
    var rgba = typeof value === "string" && /^rgba\((\d+),\s*(\d+),\s*(\d+),\s*([\d.]+)\)$/.exec(value);
    if (rgba) {
      var hex = rgba.slice(1, 4).map(function (c) { return ("0" + Number(c).toString(16)).slice(-2); }).join("");
      var swap = standIn(hex, style);
      if (!swap || !/^#[0-9a-f]{6}$/i.test(swap)) return value;
      var rgb = [1, 3, 5].map(function (i) { return parseInt(swap.slice(i, i + 2), 16); });
      return "rgba(" + rgb.join(",") + "," + rgba[4] + ")";
    }
    if (Array.isArray(value)) return value.map(function (v) { return themed(v, style); });
    if (value && typeof value === "object") {
      var copy = {};
      Object.keys(value).forEach(function (key) { copy[key] = themed(value[key], style); });
      return copy;
    }
    return value;
  }
  function chartStyle() { return printing ? null : getComputedStyle(document.documentElement); }

  // Redrawn in the theme's colours, keeping the curves a calculator has put there.
  function restyleCharts(charts) {
    var style = chartStyle();
    document.querySelectorAll("[data-chart]").forEach(function (node) {
      if (!window.Plotly || !node.data) return;
      var spec = charts[node.getAttribute("data-chart")];
      var data = themed(spec.data, style).map(function (trace, i) {
        var shown = node.data[i] || {};
        return Object.assign(trace, { x: shown.x || trace.x, y: shown.y || trace.y, name: shown.name || trace.name });
      });
      window.Plotly.react(node, data, themed(spec.layout, style), { displayModeBar: false, responsive: true });
    });
  }

  // Charts: Plotly specs computed by calc at build time, drawn once the embedded Plotly is unpacked.
  function drawCharts() {
    var specs = document.getElementById("chart-specs");
    var library = document.getElementById("plotly-js");
    if (!specs || !library) return;
    var charts = JSON.parse(specs.textContent);
    Promise.resolve().then(function () { return runScript(runbookUnpack(library.textContent)); }).then(function () {
      document.querySelectorAll("[data-chart]").forEach(function (node) {
        var spec = charts[node.getAttribute("data-chart")];
        window.Plotly.newPlot(node, themed(spec.data, chartStyle()), themed(spec.layout, chartStyle()),
          { displayModeBar: false, responsive: true });
      });
      redrawPending();
    }).catch(function () {
      // Without Plotly the numbers behind each chart are still on the page, in its table.
      document.querySelectorAll(".chart-data").forEach(function (table) { table.open = true; });
    });
    window.addEventListener("beforeprint", function () {
      printing = true;
      redrawPending(true);
      restyleCharts(charts);
      document.querySelectorAll("[data-chart]").forEach(function (node) {
        if (window.Plotly && node.data) window.Plotly.Plots.resize(node);
      });
    });
    window.addEventListener("afterprint", function () {
      printing = false;
      restyleCharts(charts);
    });
    window.addEventListener("runbook-theme", function () { restyleCharts(charts); });
  }

  // The theme: the page's first script set data-theme from the reader's choice or the system's;
  // the switch in the top bar flips it and remembers it where the browser allows (file:// may not).
  var THEME_KEY = "runbook-theme";
  var systemDark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function chosenTheme() {
    try { return window.localStorage.getItem(THEME_KEY); } catch (refused) { return null; }
  }

  function applyTheme(theme) {
    document.documentElement.setAttribute("data-theme", theme);
    var toggle = document.querySelector(".theme-toggle");
    if (toggle) toggle.setAttribute("aria-pressed", String(theme === "dark"));
    window.dispatchEvent(new Event("runbook-theme"));
  }

  function themeSwitch() {
    var toggle = document.querySelector(".theme-toggle");
    if (!toggle) return;
    toggle.hidden = false;
    toggle.setAttribute("aria-pressed", String(document.documentElement.getAttribute("data-theme") === "dark"));
    toggle.addEventListener("click", function () {
      var theme = document.documentElement.getAttribute("data-theme") === "dark" ? "light" : "dark";
      try { window.localStorage.setItem(THEME_KEY, theme); } catch (refused) { /* kept for this page only */ }
      applyTheme(theme);
    });
    if (systemDark && systemDark.addEventListener) {
      systemDark.addEventListener("change", function () {
        var chosen = chosenTheme();
        if (chosen !== "dark" && chosen !== "light") applyTheme(systemDark.matches ? "dark" : "light");
      });
    }
  }

  themeSwitch();

  window.runbook = { redraw: redraw, chartInView: chartInView };

  runbookDocuments(function () {
    if (watcher) document.querySelectorAll("[data-chart]").forEach(function (node) { watcher.observe(node); });
    showForm(currentForm() || "quick");
    if (sectionNamed()) sectionNamed().scrollIntoView();
    window.addEventListener("hashchange", function () { onHash(true); });
    if (!reduced) document.querySelectorAll("figure.anim").forEach(animate);
    // After the first paint: unpacking Plotly takes the page's thread for a few tens of ms.
    requestAnimationFrame(function () { setTimeout(drawCharts, 0); });
  });
})();
