"use strict";
(function () {
  var FORMS = ["quick", "deep"];

  // Quick learn / Deep read: the form lives in the URL, so a link can open either.
  function currentForm() {
    var hash = location.hash.replace("#", "");
    return FORMS.indexOf(hash) >= 0 ? hash : null;
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

  function onHash(scroll) {
    var form = currentForm();
    if (!form) return;
    showForm(form);
    if (scroll) window.scrollTo(0, 0);
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

  // Embedded files travel gzipped, then written in base85 over printable ASCII without < > & ' " \ ` ^ ~
  // (runbook/vendor.py); the browser's own DecompressionStream undoes the gzip.
  var DIGITS = (function () {
    var excluded = "<>&'\"\\`^~";
    var table = new Uint8Array(128);
    for (var code = 33, digit = 0; code < 127; code++) {
      if (excluded.indexOf(String.fromCharCode(code)) < 0) table[code] = digit++;
    }
    return table;
  })();

  function decodeBase85(text) {
    text = text.trim();
    var whole = text.length - text.length % 5;
    var tail = text.length % 5;
    var out = new Uint8Array(whole / 5 * 4 + (tail ? tail - 1 : 0));
    var o = 0;
    var value;
    for (var i = 0; i < whole; i += 5) {
      value = DIGITS[text.charCodeAt(i)] * 52200625 + DIGITS[text.charCodeAt(i + 1)] * 614125 +
        DIGITS[text.charCodeAt(i + 2)] * 7225 + DIGITS[text.charCodeAt(i + 3)] * 85 + DIGITS[text.charCodeAt(i + 4)];
      out[o++] = value >>> 24;
      out[o++] = (value >>> 16) & 255;
      out[o++] = (value >>> 8) & 255;
      out[o++] = value & 255;
    }
    if (tail) {
      value = 0;
      for (var k = 0; k < 5; k++) value = value * 85 + (k < tail ? DIGITS[text.charCodeAt(whole + k)] : 84);
      for (k = 0; k < tail - 1; k++) out[o++] = (value >>> (24 - 8 * k)) & 255;
    }
    return out;
  }

  function inflate(text) {
    var stream = new Blob([decodeBase85(text)]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).arrayBuffer().then(function (buffer) { return new Uint8Array(buffer); });
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
    window.Plotly.restyle(node, {
      x: curves.map(function (c) { return c.x; }),
      y: curves.map(function (c) { return c.y; }),
      name: curves.map(function (c) { return c.name; }),
    });
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
    inflate(library.textContent).then(runScript).then(function () {
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

  window.runbook = { inflate: inflate, redraw: redraw };

  document.addEventListener("DOMContentLoaded", function () {
    showForm(currentForm() || "quick");
    window.addEventListener("hashchange", function () { onHash(true); });
    if (!reduced) document.querySelectorAll("figure.anim").forEach(animate);
    drawCharts();
  });
})();
