"use strict";
// Printable notes (the @note component): "Print the note" prints a copy of the note alone, set at
// the top of the page so nothing hidden around it (a closed form, a collapsed section) can hide
// it; "Save the note as HTML" downloads the note's current content with note.css inline, a file
// that needs no script and no network. Nothing here knows what a note says.
(function () {
  if (window.runbookNote) return;

  function styles() {
    var source = document.querySelector("style[data-note-css]");
    return source ? source.textContent : "";
  }

  function prepare(block) {
    release();
    var root = document.createElement("div");
    root.className = "note-print-root";
    root.append(block.querySelector("[data-note-body]").cloneNode(true));
    document.body.append(root);
    document.body.setAttribute("data-printing-note", "");
  }

  function release() {
    document.querySelectorAll(".note-print-root").forEach(function (root) { root.remove(); });
    document.body.removeAttribute("data-printing-note");
  }

  function standalone(block) {
    var note = block.querySelector("[data-note-body]").cloneNode(true);
    var title = note.getAttribute("data-note-title") || "Note";
    var head = document.createElement("head");
    head.innerHTML = '<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">';
    var name = document.createElement("title");
    name.textContent = title;
    var style = document.createElement("style");
    style.textContent = styles();
    head.append(name, style);
    return "<!doctype html>\n<html lang=\"en-GB\">" + head.outerHTML + "<body class=\"note-file\">" + note.outerHTML +
      "</body></html>\n";
  }

  function save(block) {
    var note = block.querySelector("[data-note-body]");
    var day = new Date().toISOString().slice(0, 10);
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([standalone(block)], { type: "text/html" }));
    link.download = (note.getAttribute("data-note-file") || "note") + "-" + day + ".html";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
  }

  // A note inside a calculator's live region is out of date while the inputs are invalid or a
  // recomputation is under way: it is not printed or saved then, and the hint says why.
  function stale(block) {
    var region = block.closest("[data-calc-state]");
    var state = region ? region.getAttribute("data-calc-state") : "";
    return state === "invalid" || state === "computing";
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-note-action]");
    if (!button) return;
    var block = button.closest("[data-note]");
    var hint = block.querySelector(".note-hint");
    if (stale(block)) {
      hint.textContent = "The note shows the last plan that computed, not your current inputs: correct the " +
        "inputs marked above (or wait for the plan) before printing or saving it.";
      hint.setAttribute("data-warning", "");
      return;
    }
    hint.textContent = hint.getAttribute("data-usual") || hint.textContent;
    hint.removeAttribute("data-warning");
    if (button.getAttribute("data-note-action") === "save") {
      save(block);
    } else {
      prepare(block);
      window.print();
    }
  });
  window.addEventListener("afterprint", release);
  window.runbookNote = { prepare: prepare, release: release, standalone: standalone };
})();
