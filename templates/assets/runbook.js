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
      });
    }
    function tick() {
      step = step >= total + 1 ? 1 : step + 1;
      paint();
    }
    function play() {
      figure.classList.add("playing");
      button.textContent = "Pause";
      button.setAttribute("aria-pressed", "false");
      if (!timer) timer = window.setInterval(tick, STEP_MS);
      tick();
    }
    function stop() {
      window.clearInterval(timer);
      timer = null;
      figure.classList.remove("playing");
      button.textContent = "Play";
      button.setAttribute("aria-pressed", "true");
    }
    button.addEventListener("click", function () { timer ? stop() : play(); });
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

  // A chart out of sight (in the other form) keeps its new curves until it is shown.
  function redraw(node, curves) {
    if (!window.Plotly || !node.data || node.offsetParent === null) {
      node.pendingCurves = curves;
      return;
    }
    node.pendingCurves = null;
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

  function redrawPending() {
    document.querySelectorAll("[data-chart]").forEach(function (node) {
      if (node.pendingCurves) redraw(node, node.pendingCurves);
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
        window.Plotly.newPlot(node, spec.data, spec.layout, { displayModeBar: false, responsive: true });
      });
      redrawPending();
    }).catch(function () {
      // Without Plotly the numbers behind each chart are still on the page, in its table.
      document.querySelectorAll(".chart-data").forEach(function (table) { table.open = true; });
    });
    window.addEventListener("beforeprint", function () {
      document.querySelectorAll("[data-chart]").forEach(function (node) {
        if (window.Plotly && node.data) window.Plotly.Plots.resize(node);
      });
    });
  }

  window.runbook = { redraw: redraw };

  runbookDocuments(function () {
    showForm(currentForm() || "quick");
    if (sectionNamed()) sectionNamed().scrollIntoView();
    window.addEventListener("hashchange", function () { onHash(true); });
    if (!reduced) document.querySelectorAll("figure.anim").forEach(animate);
    // After the first paint: unpacking Plotly takes the page's thread for a few tens of ms.
    requestAnimationFrame(function () { setTimeout(drawCharts, 0); });
  });
})();
