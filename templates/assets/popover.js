"use strict";
// Every number explains itself. Clicking, tapping or focusing a number opens a popover with its
// formula, its arithmetic, the facts that arithmetic is made of (each one opens in turn, back to a
// config field or a datasheet line), its source and the document that derives it. The facts come
// from the build (runbook/provenance.py); the number's own text and arithmetic are read from the
// page, and for a number a calculator recomputed, what it was made of comes from Python on the
// reader's inputs (a "runbook-explain" event its region's calculator answers), so the popover follows.
runbookDocuments(function () {
  const source = document.getElementById("provenance");
  if (!source) return;
  const data = JSON.parse(new TextDecoder().decode(runbookUnpack(source.textContent)));
  const edition = document.body.hasAttribute("data-edition");
  const pop = document.createElement("div");
  pop.className = "popover";
  pop.id = "number-popover";
  pop.setAttribute("role", "dialog");
  pop.setAttribute("aria-label", "Where this number comes from");
  pop.hidden = true;
  document.body.append(pop);
  let anchor = null;
  let trail = [];
  let scope = null;  // the open number's live region, if a calculator recomputes it
  let recomputed = {};  // Python's facts for the open number, on the reader's inputs, once it answers
  const factOf = (path) => recomputed[path] || data.facts[path] || {};
  let returning = false; // focus handed back to the number on Escape does not reopen it

  document.querySelectorAll(".ref").forEach((node) => {
    node.tabIndex = 0;
    node.setAttribute("role", "button");
    node.setAttribute("aria-haspopup", "dialog");
    node.setAttribute("aria-controls", pop.id);
  });

  const pathOf = (node) => node.getAttribute("data-ref").split("|")[0];
  const words = (path) => {
    const parts = path.split(".");
    return parts[parts.length - 1].replace(/_/g, " ") + (parts.length > 1 ? " · " + parts.slice(0, -1).join(".") : "");
  };
  // The number as the reader's inputs make it, where a calculator recomputed it; else as the page
  // shows it now; else as the build computed it.
  function current(path) {
    if (recomputed[path]) return recomputed[path].text;
    const selector = `.ref[data-ref="${CSS.escape(path)}"]`;
    // the open number's own region first: in the edition another calculator's region may show the path too
    const node = (scope && scope.querySelector(selector)) || document.querySelector(selector);
    return node ? node.textContent : (data.facts[path] || {}).text || "";
  }
  const nameOf = (path) => factOf(path).name || words(path);

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function draw(path, node) {
    const fact = factOf(path);
    const worked = node && node.title ? node.title : fact.worked;
    pop.replaceChildren();
    const head = element("p", "popover-value", node ? node.textContent : current(path));
    const name = element("p", "popover-name", nameOf(path));
    pop.append(head, name);
    if (fact.formula) pop.append(element("p", "popover-formula", fact.formula));
    if (worked && worked !== head.textContent) {
      const line = element("p", "popover-worked");
      line.append(element("span", "worked-label", "Worked"), " ", worked);
      pop.append(line);
    }
    if (fact.inputs && fact.inputs.length) {
      pop.append(element("p", "popover-label", "Made of"));
      const list = element("ul", "popover-inputs");
      fact.inputs.forEach((input) => {
        const item = element("li");
        const button = element("button", "popover-input");
        button.type = "button";
        button.append(element("span", "popover-input-value", current(input)), " ", element("span", "popover-input-name", nameOf(input)));
        button.addEventListener("click", () => { trail.push(path); draw(input, null); focusFirst(); });
        item.append(button);
        list.append(item);
      });
      pop.append(list);
    }
    if (fact.source) pop.append(element("p", "popover-source", "Source: " + fact.source));
    if (!fact.inputs && !fact.source && !fact.formula) pop.append(element("p", "popover-source", "A figure of the reference stack, as calc holds it."));
    if (fact.home && data.documents[fact.home]) {
      const [title, file] = data.documents[fact.home];
      const link = element("a", "popover-home", `Derived in document ${fact.home} · ${title}`);
      link.href = edition ? "#d" + fact.home : file;
      pop.append(link);
    }
    if (trail.length) {
      const back = element("button", "popover-back", "← Back");
      back.type = "button";
      back.addEventListener("click", () => { draw(trail.pop(), trail.length ? null : anchor); focusFirst(); });
      pop.append(back);
    }
  }

  function place(node) {
    const box = node.getBoundingClientRect();
    pop.hidden = false;
    const width = pop.offsetWidth;
    const left = Math.max(8, Math.min(window.scrollX + box.left, window.scrollX + document.documentElement.clientWidth - width - 8));
    pop.style.left = left + "px";
    pop.style.top = window.scrollY + box.bottom + 6 + "px";
  }

  function open(node) {
    if (anchor === node && !pop.hidden) return;
    anchor = node;
    trail = [];
    scope = node.closest("[data-live]");
    recomputed = {};  // asked afresh: the reader may have changed an input since
    draw(pathOf(node), node);
    node.setAttribute("aria-expanded", "true");
    place(node);
    if (scope) askPython(node, scope);
  }

  // Redrawn once Python answers, if the reader is still on this number's first page.
  let asked = 0;  // the latest question: an answer to an older one (an earlier number, earlier inputs) is dropped
  function askPython(node, region) {
    const path = pathOf(node);
    const question = ++asked;
    region.dispatchEvent(new CustomEvent("runbook-explain", { cancelable: true, detail: {
      paths: [path],
      reply: (answer) => answer.then((facts) => {
        if (!facts || question !== asked) return;
        recomputed = facts;
        if (anchor === node && !pop.hidden && !trail.length) { draw(path, node); place(node); }
      }, () => {}),
    } }));
  }

  function close(refocus) {
    if (pop.hidden) return;
    pop.hidden = true;
    const was = anchor;
    anchor = null;
    if (was) {
      was.setAttribute("aria-expanded", "false");
      if (refocus) { returning = true; was.focus(); returning = false; }
    }
  }

  function focusFirst() {
    const first = pop.querySelector("button, a");
    if (first) first.focus();
  }

  document.addEventListener("click", (event) => {
    const node = event.target.closest && event.target.closest(".ref");
    if (node) { open(node); return; }
    // (a button inside may already have redrawn the popover, so ask the path, not the node)
    if (!event.composedPath().includes(pop)) close(false);
  });
  document.addEventListener("focusin", (event) => {
    const node = event.target.closest && event.target.closest(".ref");
    if (node && !returning) open(node);
    else if (!node && !pop.contains(event.target)) close(false);
  });
  document.addEventListener("keydown", (event) => {
    const node = event.target.closest && event.target.closest(".ref");
    if (node && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); open(node); focusFirst(); }
    else if (event.key === "Escape" && !pop.hidden) { event.preventDefault(); close(true); }
  });
  window.addEventListener("resize", () => { if (anchor && !pop.hidden) place(anchor); });
});
