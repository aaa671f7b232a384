"use strict";
// The calculator on the page: the same calc/ package that built the page, run by Pyodide in a worker.
// Before Python starts, the page shows the figures computed at build time; afterwards every live
// figure (inside [data-live]) is replaced by what calc.calculator answers for the reader's inputs.
(function () {
  const calculator = document.querySelector("[data-calculator]");
  if (!calculator) return;
  const form = calculator.querySelector("form");
  const status = calculator.querySelector(".calc-status");
  const modelSelect = form.elements.namedItem("model");
  let worker = null;
  let ready = null;
  let nextId = 0;
  const waiting = new Map();
  let latest = 0;

  function say(text) { status.textContent = text; }

  function start() {
    if (ready) return ready;
    performance.mark("calc-boot-start");
    say("Starting Python in your browser (first time only)…");
    calculator.setAttribute("data-state", "starting");
    ready = unpackRuntime().then(([files, calc]) => new Promise((resolve, reject) => {
      const source = document.getElementById("calc-worker").textContent;
      worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
      worker.onmessage = (event) => {
        const message = event.data;
        if (message.type === "ready") {
          performance.mark("calc-boot-end");
          calculator.setAttribute("data-boot-ms", Math.round(message.ms));
          resolve();
        } else if (message.type === "failed") {
          reject(new Error(message.message));
        } else if (message.type === "loaded-stdlib") {
          const done = waiting.get("loaded-stdlib");
          waiting.delete("loaded-stdlib");
          if (done) done(message.files);
        } else if (message.type === "result") {
          const done = waiting.get(message.id);
          waiting.delete(message.id);
          if (done) done({ answer: JSON.parse(message.answer), ms: message.ms });
        }
      };
      worker.onerror = (event) => { event.preventDefault(); reject(new Error(event.message || "the worker could not start")); };
      worker.postMessage({
        type: "boot",
        files,
        lock: document.getElementById("calc-lock").textContent,
        calc,
      }, Object.values(files).map((bytes) => bytes.buffer));
    }));
    ready.catch((error) => {
      calculator.setAttribute("data-state", "failed");
      say("Python could not start here (" + error.message + "). The figures shown are the reference stack’s.");
    });
    return ready;
  }

  async function unpackRuntime() {
    const nodes = Array.from(document.querySelectorAll("script[data-runtime-file]"));
    const unpacked = await Promise.all(nodes.map((node) => window.runbook.inflate(node.textContent)));
    const files = {};
    nodes.forEach((node, i) => { files[node.getAttribute("data-runtime-file")] = unpacked[i]; });
    const calc = JSON.parse(new TextDecoder().decode(await window.runbook.inflate(document.getElementById("calc-source").textContent)));
    return [files, calc];
  }

  function compute(request) {
    return start().then(() => new Promise((resolve) => {
      const id = ++nextId;
      waiting.set(id, resolve);
      worker.postMessage({ type: "run", id, request });
    }));
  }

  function loadedStdlib() {
    return start().then(() => new Promise((resolve) => {
      waiting.set("loaded-stdlib", resolve);
      worker.postMessage({ type: "loaded-stdlib" });
    }));
  }

  function livePaths() {
    const paths = new Set();
    document.querySelectorAll("[data-live] [data-ref]").forEach((node) => paths.add(node.getAttribute("data-ref")));
    return Array.from(paths);
  }

  function readInputs() {
    const values = {};
    form.querySelectorAll("select, input").forEach((field) => { values[field.name] = field.value; });
    return { values, config: form.elements.namedItem("config").value, paths: livePaths() };
  }

  function showErrors(errors) {
    calculator.querySelectorAll("[data-error-for]").forEach((slot) => {
      const name = slot.getAttribute("data-error-for");
      const message = errors[name] || "";
      slot.textContent = message;
      const field = form.elements.namedItem(name);
      if (field && field.setAttribute) field.setAttribute("aria-invalid", message ? "true" : "false");
    });
    if (errors.config) calculator.querySelector(".calc-config").open = true;
  }

  function apply(answer) {
    document.querySelectorAll("[data-live] [data-ref]").forEach((node) => {
      const figure = answer.refs[node.getAttribute("data-ref")];
      if (!figure) return;
      node.textContent = figure[0];
      if (figure[1]) node.setAttribute("title", figure[1]); else node.removeAttribute("title");
    });
    document.querySelectorAll("[data-live] [data-bar]").forEach((bar) => {
      bar.style.width = answer.bars[Number(bar.getAttribute("data-bar"))] + "%";
    });
    document.dispatchEvent(new CustomEvent("runbook:curves", { detail: answer.curves }));
  }

  async function recompute() {
    calculator.setAttribute("data-state", "computing");
    const request = readInputs();
    const id = ++latest;
    const started = performance.now();
    const { answer, ms } = await compute(request);
    if (id !== latest) return;
    if (!answer.ok) {
      showErrors(answer.errors);
      calculator.setAttribute("data-state", "invalid");
      say(answer.errors.calculator || "Fix the highlighted input; the figures below are from the last valid one.");
      return;
    }
    showErrors({});
    apply(answer);
    const total = performance.now() - started;
    calculator.setAttribute("data-state", "computed");
    calculator.setAttribute("data-last-ms", total.toFixed(1));
    if (!performance.getEntriesByName("calc-first-result").length) performance.mark("calc-first-result");
    say("Recomputed by calc in Python, in your browser: " + ms.toFixed(1) + " ms in Python, " + total.toFixed(1) + " ms in all.");
  }

  function markFirstInput() {
    if (!performance.getEntriesByName("calc-first-input").length) performance.mark("calc-first-input");
  }

  function onChange(event) {
    if (event.target.name === "config") return;
    markFirstInput();
    recompute();
  }

  form.addEventListener("input", onChange);
  form.addEventListener("change", onChange);
  form.addEventListener("submit", (event) => event.preventDefault());
  form.querySelector("[data-action=use-config]").addEventListener("click", () => {
    markFirstInput();
    modelSelect.value = "custom";
    recompute();
  });
  calculator.addEventListener("focusin", start, { once: true });
  if ("IntersectionObserver" in window) {
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) { observer.disconnect(); start(); }
    }, { rootMargin: "200px" });
    observer.observe(calculator);
  }
  window.runbookCalculator = { start, compute, recompute, loadedStdlib };
})();
