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
      figure.querySelectorAll(".grid-row").forEach(function (row) {
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

  // Charts: Plotly specs computed by calc at build time, drawn here.
  function drawCharts() {
    var specs = document.getElementById("chart-specs");
    if (!specs || !window.Plotly) return;
    var charts = JSON.parse(specs.textContent);
    document.querySelectorAll("[data-chart]").forEach(function (node) {
      var spec = charts[node.getAttribute("data-chart")];
      window.Plotly.newPlot(node, spec.data, spec.layout, { displayModeBar: false, responsive: true });
    });
    window.addEventListener("beforeprint", function () {
      document.querySelectorAll("[data-chart]").forEach(function (node) { window.Plotly.Plots.resize(node); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    showForm(currentForm() || "quick");
    window.addEventListener("hashchange", function () { onHash(true); });
    if (!reduced) document.querySelectorAll("figure.anim").forEach(animate);
    drawCharts();
  });
})();
