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
  const configBox = form.elements.namedItem("config");
  const longestConfig = Number(configBox.getAttribute("data-longest"));

  // Python in a worker. `ready` is the start under way or done; a start that fails is forgotten,
  // so the next input tries again, unless the browser lacks what Python needs.
  let worker = null;
  let ready = null;
  let unavailable = "";
  let nextId = 0;
  const waiting = new Map();

  function say(text) { status.textContent = text; }

  function missingFeature() {
    if (typeof Worker !== "function") return "this browser cannot run a Web Worker";
    if (typeof WebAssembly !== "object") return "this browser has no WebAssembly";
    if (typeof DecompressionStream !== "function") return "this browser cannot unpack the files the page carries";
    return "";
  }

  // The runtime travels in script elements after this one: read them only once the document has
  // been parsed, or a start early in loading (a reload restoring the scroll position) finds half.
  function documentParsed() {
    if (document.readyState !== "loading") return Promise.resolve();
    return new Promise((resolve) => document.addEventListener("DOMContentLoaded", resolve, { once: true }));
  }

  function start() {
    if (ready) return ready;
    unavailable = unavailable || missingFeature();
    if (unavailable) return Promise.reject(cannotStart(new Error(unavailable)));
    performance.mark("calc-boot-start");
    say("Starting Python in your browser (first time only)…");
    calculator.setAttribute("data-python", "starting");
    const attempt = documentParsed().then(unpackRuntime).then(boot);
    ready = attempt;
    attempt.then(() => {
      if (ready !== attempt) return;
      calculator.setAttribute("data-python", "ready");
      if (calculator.getAttribute("data-state") === "static") {
        say("Python is ready in your browser: change any input and every figure below re-derives.");
      }
    }, (error) => {
      if (ready !== attempt) return;
      stopWorker();
      ready = null;
      cannotStart(error);
    });
    return attempt;
  }

  function cannotStart(error) {
    calculator.setAttribute("data-python", "failed");
    calculator.setAttribute("data-state", "unavailable");
    say("The calculator is unavailable: Python could not start here (" + error.message +
        "). The figures shown are the reference stack’s" + (unavailable ? "." : "; change an input to try again."));
    return error;
  }

  function boot([files, calc]) {
    return new Promise((resolve, reject) => {
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
        } else {
          const done = waiting.get(message.id);
          waiting.delete(message.id);
          if (done) done(message);
        }
      };
      worker.onerror = (event) => { event.preventDefault(); reject(new Error(event.message || "the worker could not start")); };
      worker.postMessage({ type: "boot", files, lock: document.getElementById("calc-lock").textContent, calc },
        Object.values(files).map((bytes) => bytes.buffer));
    });
  }

  function stopWorker() {
    if (worker) worker.terminate();
    worker = null;
    waiting.forEach((done) => done({ answer: { ok: false, errors: { calculator: "Python stopped before it answered." } }, ms: 0 }));
    waiting.clear();
  }

  async function unpackRuntime() {
    const nodes = Array.from(document.querySelectorAll("script[data-runtime-file]"));
    if (!nodes.length) throw new Error("the page carries no Python runtime");
    const unpacked = await Promise.all(nodes.map((node) => window.runbook.inflate(node.textContent)));
    const files = {};
    nodes.forEach((node, i) => { files[node.getAttribute("data-runtime-file")] = unpacked[i]; });
    const calc = JSON.parse(new TextDecoder().decode(await window.runbook.inflate(document.getElementById("calc-source").textContent)));
    return [files, calc];
  }

  // One question to Python. A Python that died (Pyodide cannot recover from a fatal error) is
  // stopped, and the next question starts a fresh one.
  function ask(message) {
    return start().then(() => new Promise((resolve) => {
      const id = ++nextId;
      waiting.set(id, (reply) => {
        if (reply.fatal) { stopWorker(); ready = null; }
        resolve(reply);
      });
      worker.postMessage({ ...message, id });
    }));
  }

  function compute(request) {
    performance.mark("calc-run");
    return ask({ type: "run", request }).then((reply) => ({
      answer: typeof reply.answer === "string" ? JSON.parse(reply.answer) : reply.answer,
      ms: reply.ms,
    }));
  }

  function loadedStdlib() {
    return ask({ type: "loaded-stdlib" }).then((reply) => reply.files);
  }

  function livePaths() {
    const paths = new Set();
    document.querySelectorAll("[data-live] [data-ref]").forEach((node) => paths.add(node.getAttribute("data-ref")));
    return Array.from(paths);
  }

  // The config is read only when it is the model in use, and no field is sent whole past what calc
  // accepts (what is sent is still enough for calc to say it is too long).
  function readInputs() {
    const values = {};
    form.querySelectorAll("select, input").forEach((field) => { values[field.name] = field.value.slice(0, 1000); });
    const config = modelSelect.value === "custom" ? configBox.value.slice(0, longestConfig + 1) : null;
    return { values, config, paths: livePaths() };
  }

  function showMessages(attribute, messages) {
    calculator.querySelectorAll("[" + attribute + "]").forEach((slot) => {
      const name = slot.getAttribute(attribute);
      const message = messages[name] || "";
      slot.textContent = message;
      if (attribute !== "data-error-for") return;
      const field = form.elements.namedItem(name);
      if (field && field.setAttribute) field.setAttribute("aria-invalid", message ? "true" : "false");
    });
  }

  function apply(answer) {
    document.querySelectorAll("[data-live] [data-ref]").forEach((node) => {
      const figure = answer.refs[node.getAttribute("data-ref")];
      if (!figure) return;
      node.textContent = figure[0];
      if (figure[1]) node.setAttribute("title", figure[1]); else node.removeAttribute("title");
    });
    document.querySelectorAll("[data-live] [data-bar]").forEach((bar) => {
      bar.style.width = Math.min(100, Math.max(0, answer.bars[Number(bar.getAttribute("data-bar"))])) + "%";
    });
    document.dispatchEvent(new CustomEvent("runbook:curves", { detail: answer.curves }));
  }

  let latest = 0;

  async function recompute() {
    const id = ++latest;
    const request = readInputs();
    const started = performance.now();
    calculator.setAttribute("data-state", "computing");
    let reply;
    try {
      reply = await compute(request);
    } catch (error) {
      if (id === latest) calculator.setAttribute("data-state", "unavailable");
      return;
    }
    if (id !== latest) return;
    const { answer, ms } = reply;
    if (!answer.ok) {
      showMessages("data-error-for", answer.errors);
      showMessages("data-note-for", {});
      if (answer.errors.config) calculator.querySelector(".calc-config").open = true;
      calculator.setAttribute("data-state", "invalid");
      say(answer.errors.calculator || "Fix the highlighted input; the figures below are from the last valid one.");
      return;
    }
    showMessages("data-error-for", {});
    showMessages("data-note-for", answer.notes || {});
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

  // A text box recomputes as it is typed in, a list when its choice changes: one event each, so
  // one change is one computation. The config waits for its button.
  function onEdit(event) {
    const field = event.target;
    if (field.name === "config") return;
    if ((event.type === "input") !== (field.tagName === "INPUT")) return;
    markFirstInput();
    recompute();
  }

  form.addEventListener("input", onEdit);
  form.addEventListener("change", onEdit);
  form.addEventListener("submit", (event) => event.preventDefault());
  form.querySelector("[data-action=use-config]").addEventListener("click", () => {
    markFirstInput();
    modelSelect.value = "custom";
    recompute();
  });
  const quietStart = () => start().catch(() => {});
  calculator.addEventListener("focusin", quietStart, { once: true });
  if ("IntersectionObserver" in window) {
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) { observer.disconnect(); quietStart(); }
    }, { rootMargin: "200px" });
    observer.observe(calculator);
  }
  window.runbookCalculator = { start, compute, recompute, loadedStdlib };
})();
