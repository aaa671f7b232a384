"use strict";
// Where a page's documents come from. A document's own page has it in its markup; the edition
// carries every document packed (a sixth of the size) and unpacks them just after its first paint,
// so its contents show at once. Scripts that look for calculators, charts, figures or sections
// start with runbookDocuments(start), and find them.
var runbookDocuments = (function () {
  var waiting = [];
  var done = false;

  function finish() {
    done = true;
    waiting.splice(0).forEach(function (start) { start(); });
  }

  function begin() {
    var packed = document.getElementById("edition-documents");
    var place = document.getElementById("documents");
    if (!packed || !place) return finish();
    requestAnimationFrame(function () {
      setTimeout(function () {
        place.insertAdjacentHTML("beforeend", new TextDecoder().decode(runbookUnpack(packed.textContent)));
        packed.textContent = "";
        finish();
      }, 0);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", begin, { once: true });
  else begin();
  return function (start) { if (done) start(); else waiting.push(start); };
})();
