"use strict";
// Calculators on the page: the same calc/ package that built the page, run by Pyodide in one
// worker shared by every calculator. Before Python starts, the page shows the figures computed at
// build time; afterwards every figure that follows a calculator (inside [data-live~=NAME]) is
// replaced by what calc.calculators answers for that calculator's inputs. Nothing here knows what
// any calculator computes: the declarations in calc/calculators.py do.
runbookDocuments(function () {
  const sections = Array.from(document.querySelectorAll("[data-calculator]"));
  if (!sections.length) return;

  // ---- Python, shared. `ready` is the start under way or done; a start that fails is forgotten,
  // so the next input tries again, unless the browser lacks what Python needs.
  const runtime = (function () {
    let worker = null;
    let ready = null;
    let unavailable = "";
    let nextId = 0;
    const waiting = new Map();
    const hearing = new Map();  // id → what hears that question's progress reports
    const listeners = [];

    function tell(state, detail) { listeners.forEach((listener) => listener(state, detail)); }

    function missingFeature() {
      if (typeof Worker !== "function") return "this browser cannot run a Web Worker";
      if (typeof WebAssembly !== "object") return "this browser has no WebAssembly";
      return "";
    }

    // The runtime travels in script elements after this one: read them only once the document
    // has been parsed, or a start early in loading (a reload restoring the scroll) finds half.
    function documentParsed() {
      if (document.readyState !== "loading") return Promise.resolve();
      return new Promise((resolve) => document.addEventListener("DOMContentLoaded", resolve, { once: true }));
    }

    function start() {
      if (ready) return ready;
      unavailable = unavailable || missingFeature();
      if (unavailable) {
        const error = new Error(unavailable);
        tell("failed", { error, final: true });
        return Promise.reject(error);
      }
      performance.mark("calc-boot-start");
      tell("starting");
      const attempt = documentParsed().then(boot);
      ready = attempt;
      attempt.then(() => { if (ready === attempt) tell("ready"); }, (error) => {
        if (ready !== attempt) return;
        stop();
        ready = null;
        tell("failed", { error, final: false });
      });
      return attempt;
    }

    // The worker unpacks the files itself, off the page's thread; it runs the page's own copy of
    // fzstd and unpack.js before its own script.
    function boot() {
      return new Promise((resolve, reject) => {
        const text = (id) => document.getElementById(id).textContent;
        const nodes = Array.from(document.querySelectorAll("script[data-runtime-file]"));
        if (!nodes.length) throw new Error("the page carries no Python runtime");
        const packed = {};
        nodes.forEach((node) => { packed[node.getAttribute("data-runtime-file")] = node.textContent; });
        const source = [text("zstd-js"), text("unpack-js"), text("calc-worker")].join("\n;\n");
        worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
        worker.onmessage = (event) => {
          const message = event.data;
          if (message.type === "ready") {
            performance.mark("calc-boot-end");
            sections.forEach((section) => section.setAttribute("data-boot-ms", Math.round(message.ms)));
            resolve();
          } else if (message.type === "failed") {
            reject(new Error(message.message));
          } else if (message.type === "progress") {
            const heard = hearing.get(message.id);
            if (heard) heard(message);
          } else {
            const done = waiting.get(message.id);
            waiting.delete(message.id);
            if (done) done(message);
          }
        };
        worker.onerror = (event) => { event.preventDefault(); reject(new Error(event.message || "the worker could not start")); };
        worker.postMessage({ type: "boot", packed, calc: text("calc-source"), lock: text("calc-lock") });
      });
    }

    function stop() {
      if (worker) worker.terminate();
      worker = null;
      waiting.forEach((done) => done({ answer: { ok: false, errors: { calculator: "Python stopped before it answered." } }, ms: 0 }));
      waiting.clear();
      hearing.clear();
    }

    // One question to Python. A Python that died (Pyodide cannot recover from a fatal error) is
    // stopped, and the next question starts a fresh one.
    function ask(message, onProgress) {
      return start().then(() => new Promise((resolve) => {
        const id = ++nextId;
        if (onProgress) hearing.set(id, onProgress);
        waiting.set(id, (reply) => {
          hearing.delete(id);
          if (reply.fatal) { stop(); ready = null; }
          resolve(reply);
        });
        worker.postMessage({ ...message, id });
      }));
    }

    return {
      start,
      ask,
      isFinal: () => Boolean(unavailable),
      listen: (listener) => listeners.push(listener),
    };
  })();

  const HELD_PREVIEW = 20000; // characters a text box shows of a paste held aside

  // ---- One calculator: its form, and every region of the page that follows it.
  function Calculator(section) {
    const name = section.getAttribute("data-calculator");
    const form = section.querySelector("form");
    const status = section.querySelector(".calc-status");
    const inputs = section.querySelector("[data-inputs]");
    const modelSelect = form.elements.namedItem("model");
    const configBox = form.elements.namedItem("config");
    // Python counts characters and JavaScript code units: send up to twice the limit, never less.
    const longestConfig = configBox ? 2 * Number(configBox.getAttribute("data-longest")) + 2 : 0;
    let appliedConfig = null;
    let latest = 0;
    let slowTimer = null;

    const chartInView = (node) => !window.runbook || window.runbook.chartInView(node);
    // The regions that follow this calculator, and the nodes in them, are found once: a recompute
    // would otherwise search the whole page (the edition holds sixteen documents) several times.
    let followers = null;
    const found = new Map();
    const regions = () => followers || (followers = Array.from(document.querySelectorAll("[data-live]"))
      .filter((node) => node.getAttribute("data-live").split(/\s+/).includes(name)));
    const within = (selector) => {
      if (!found.has(selector)) found.set(selector, regions().flatMap((region) => Array.from(region.querySelectorAll(selector))));
      return found.get(selector);
    };
    function say(text) { status.textContent = text; }
    function setState(state) {
      section.setAttribute("data-state", state);
      regions().forEach((region) => region.setAttribute("data-calc-state", state));
    }

    function request() {
      const values = {};
      // A text field sends up to twice its limit (Python counts characters, JavaScript code units), so
      // Python sees an over-long paste and says so; other fields at most a thousand.
      form.querySelectorAll("select, input, textarea[data-longest]:not([name=config])").forEach((field) => {
        const longest = field.tagName === "TEXTAREA" ? 2 * Number(field.getAttribute("data-longest")) + 2 : 1000;
        values[field.name] = valueOf(field).slice(0, longest);
      });
      const paths = new Set(within("[data-ref]").map((node) => node.getAttribute("data-ref")));
      const charts = new Set(within("[data-chart]").filter(chartInView).map((node) => node.getAttribute("data-chart")));
      const custom = modelSelect && modelSelect.value === "custom";
      return {
        calculator: name,
        values,
        config: custom ? (appliedConfig || "").slice(0, longestConfig) : null,
        paths: Array.from(paths),
        charts: Array.from(charts),
        bars: within("[data-bar]").length > 0,
      };
    }

    // Charts out of view are not computed with the figures: a chart costs Python more than every
    // figure on its page (each point is a computation of its own), so the figures come back first.
    // The curves owed are asked for, with the inputs the figures were computed for, once the reader
    // pauses, or at once when an owed chart scrolls into view.
    const PAUSE_MS = 250;
    let shownRequest = null;  // the request whose answer the page shows
    let shownCount = 0;
    let owed = [];
    let fillTimer = null;

    function chartsOutOfView(asked) {
      const names = within("[data-chart]").map((node) => node.getAttribute("data-chart"));
      return Array.from(new Set(names)).filter((chart) => !asked.charts.includes(chart));
    }

    function fillOwed() {
      clearTimeout(fillTimer);
      if (running || !owed.length || !shownRequest) return;  // show() asks again when Python is free
      const charts = owed;
      const count = shownCount;
      owed = [];
      runtime.ask({ type: "run", request: { ...shownRequest, paths: [], charts, bars: false } }).then((reply) => {
        const answer = typeof reply.answer === "string" ? JSON.parse(reply.answer) : reply.answer;
        if (answer.ok && count === shownCount) drawCurves(answer.curves || {});
      }, () => {});
    }

    // A chart whose curves are owed is marked, so a print made before they arrive says so rather
    // than setting the last input's curves beside this input's figures.
    function markOwed(charts) {
      within("[data-chart]").forEach((node) => {
        const figure = node.closest(".chart") || node;
        if (charts.includes(node.getAttribute("data-chart"))) figure.setAttribute("data-curves-owed", "");
        else figure.removeAttribute("data-curves-owed");
      });
    }

    window.addEventListener("beforeprint", () => fillOwed());

    // A popover opened on a number this calculator recomputed explains it on the reader's inputs:
    // Python is asked, with the request the figures on screen answer, what the number was made of.
    function explain(event) {
      if (!shownRequest) return;  // nothing recomputed yet: the build's explanation is the right one
      event.preventDefault();
      const asked = { ...shownRequest, paths: [], charts: [], bars: false, explain: event.detail.paths };
      event.detail.reply(runtime.ask({ type: "run", request: asked }).then((reply) => {
        const answer = typeof reply.answer === "string" ? JSON.parse(reply.answer) : reply.answer;
        return answer.ok ? answer.facts : null;
      }));
    }
    regions().forEach((region) => region.addEventListener("runbook-explain", explain));

    function fillWhenPaused() {
      clearTimeout(fillTimer);
      if (!owed.length) return;
      const owedInView = within("[data-chart]").some((node) => chartInView(node) && owed.includes(node.getAttribute("data-chart")));
      if (owedInView) fillOwed(); else fillTimer = setTimeout(fillOwed, PAUSE_MS);
    }

    document.addEventListener("runbook-chart-in-view", (event) => {
      if (owed.includes(event.target.getAttribute("data-chart"))) fillOwed();
    });

    function showMessages(attribute, messages) {
      section.querySelectorAll("[" + attribute + "]").forEach((slot) => {
        const field = slot.getAttribute(attribute);
        const message = messages[field] || "";
        slot.textContent = message;
        if (attribute !== "data-error-for") return;
        const input = form.elements.namedItem(field);
        if (input && input.setAttribute) input.setAttribute("aria-invalid", message ? "true" : "false");
      });
    }

    function apply(answer) {
      within("[data-ref]").forEach((node) => {
        const figure = answer.refs[node.getAttribute("data-ref")];
        if (!figure) return;
        node.textContent = figure[0];
        if (figure[1]) node.setAttribute("title", figure[1]); else node.removeAttribute("title");
      });
      within("[data-bar]").forEach((bar) => {
        const width = (answer.bars || [])[Number(bar.getAttribute("data-bar"))];
        bar.style.width = Math.min(100, Math.max(0, Number(width) || 0)) + "%";
      });
      drawCurves(answer.curves || {});
      if (inputs) inputs.textContent = answer.inputs;
    }

    function drawCurves(curves) {
      Object.entries(curves).forEach(([chart, data]) => {
        within("[data-chart='" + chart + "']").forEach((node) => (node.closest(".chart") || node).removeAttribute("data-curves-owed"));
        within("[data-chart='" + chart + "']").forEach((node) => window.runbook.redraw(node, data.curves));
        within("[data-chart-table='" + chart + "']").forEach((body) => {
          body.replaceChildren(...data.rows.map((row) => {
            const tr = document.createElement("tr");
            row.forEach((cell) => { const td = document.createElement("td"); td.textContent = cell; tr.append(td); });
            return tr;
          }));
        });
      });
    }

    // One computation at a time per calculator, and only the latest input matters: edits made
    // while Python is busy are gathered into one request, sent when it is free, so a burst of typing
    // costs two computations, not one per keystroke.
    let running = false;
    let edited = false;

    async function recompute() {
      latest += 1;
      clearTimeout(fillTimer);
      setState("computing");
      clearTimeout(slowTimer);
      slowTimer = setTimeout(() => { if (section.getAttribute("data-state") === "computing") say("Computing…"); }, 300);
      if (running) { edited = true; return; }
      running = true;
      try {
        let reply;
        let started;
        let asked;
        do {
          edited = false;
          asked = request();
          started = performance.now();
          performance.mark("calc-run");
          try {
            reply = await runtime.ask({ type: "run", request: asked }, (report) => {
              if (edited) return; // a newer input is waiting: this run's progress is not the reader's
              clearTimeout(slowTimer);
              section.setAttribute("data-progress", report.done + "/" + report.total);
              say("Computing… " + report.done + " of " + report.total + " " + report.what + ".");
            });
          } catch (error) {
            if (!edited) setState("unavailable");
            reply = null;
          }
        } while (edited);
        if (reply) show(reply, started, asked);
      } finally {
        running = false;
      }
      fillWhenPaused();
    }

    function show(reply, started, asked) {
      clearTimeout(slowTimer);
      const answer = typeof reply.answer === "string" ? JSON.parse(reply.answer) : reply.answer;
      if (!answer.ok) {
        showMessages("data-error-for", answer.errors);
        showMessages("data-note-for", {});
        const config = section.querySelector(".calc-config");
        if (answer.errors.config && config) config.open = true;
        setState("invalid");
        say(answer.errors.calculator || "Fix the highlighted input; the figures below are from the last valid one.");
        return;
      }
      showMessages("data-error-for", {});
      showMessages("data-note-for", answer.notes || {});
      shownRequest = asked;
      shownCount += 1;
      owed = chartsOutOfView(asked);
      markOwed(owed);
      apply(answer);
      const total = performance.now() - started;
      setState("computed");
      section.setAttribute("data-last-ms", total.toFixed(1));
      if (!performance.getEntriesByName("calc-first-result").length) performance.mark("calc-first-result");
      say("Recomputed by calc in Python, in your browser: " + reply.ms.toFixed(1) + " ms in Python, " + total.toFixed(1) + " ms in all.");
    }

    function markFirstInput() {
      if (!performance.getEntriesByName("calc-first-input").length) performance.mark("calc-first-input");
    }

    // A text box recomputes as it is typed in, a list when its choice changes: one event each, so
    // one change is one computation. The config waits for its button.
    function onEdit(event) {
      const field = event.target;
      if (field.name === "config") return;
      if ((event.type === "input") !== (field.tagName === "INPUT" || field.tagName === "TEXTAREA")) return;
      markFirstInput();
      recompute();
    }

    // A paste too long for a text box to lay out quickly (a day of logs: seconds of the page's thread)
    // is held aside whole. The box shows its start and says how much was pasted; Python reads all of
    // it. A large paste replaces what the box held, and typing in the box afterwards drops it.
    const held = new WeakMap();
    const valueOf = (box) => (held.has(box) ? held.get(box) : box.value);
    form.querySelectorAll("textarea[data-longest]").forEach((box) => {
      box.addEventListener("paste", (event) => {
        const text = event.clipboardData ? event.clipboardData.getData("text/plain") : "";
        if (text.length <= HELD_PREVIEW) return;
        event.preventDefault();
        held.set(box, text);
        box.value = text.slice(0, HELD_PREVIEW) + "\n\n[… " + text.length.toLocaleString("en-GB") +
          " characters pasted, all of them read; the box shows the first " + HELD_PREVIEW.toLocaleString("en-GB") +
          ". Typing here replaces the paste with what the box shows.]";
        if (box !== configBox) { markFirstInput(); recompute(); }
      });
      box.addEventListener("input", () => held.delete(box));
    });

    form.addEventListener("input", onEdit);
    form.addEventListener("change", onEdit);
    form.addEventListener("submit", (event) => event.preventDefault());
    const useConfig = form.querySelector("[data-action=use-config]");
    if (useConfig) {
      useConfig.addEventListener("click", () => {
        markFirstInput();
        appliedConfig = valueOf(configBox);
        modelSelect.value = "custom";
        recompute();
      });
    }

    runtime.listen((state, detail) => {
      if (state === "starting") {
        section.setAttribute("data-python", "starting");
        say("Starting Python in your browser…");
      } else if (state === "ready") {
        section.setAttribute("data-python", "ready");
        if (section.getAttribute("data-state") === "static") {
          say("Python is ready in your browser: change any input and every figure that follows it re-derives.");
        }
      } else if (state === "failed") {
        section.setAttribute("data-python", "failed");
        setState("unavailable");
        say("The calculator is unavailable: Python could not start here (" + detail.error.message +
            "). The figures shown are the reference stack’s" + (detail.final ? "." : "; change an input to try again."));
      }
    });

    const quietStart = () => runtime.start().catch(() => {});
    section.addEventListener("focusin", quietStart, { once: true });
    if ("IntersectionObserver" in window) {
      const observer = new IntersectionObserver((entries) => {
        if (entries.some((entry) => entry.isIntersecting)) { observer.disconnect(); quietStart(); }
      }, { rootMargin: "200px" });
      observer.observe(section);
    }
    return { name, recompute };
  }

  const calculators = sections.map(Calculator);
  const first = calculators[0];

  function compute(asked) {
    const full = { calculator: first.name, ...asked };
    performance.mark("calc-run");
    return runtime.ask({ type: "run", request: full }).then((reply) => ({
      answer: typeof reply.answer === "string" ? JSON.parse(reply.answer) : reply.answer,
      ms: reply.ms,
    }));
  }

  window.runbookCalculator = {
    start: runtime.start,
    compute,
    recompute: (name) => (calculators.find((c) => c.name === name) || first).recompute(),
    loadedStdlib: () => runtime.ask({ type: "loaded-stdlib" }).then((reply) => reply.files),
  };
});
