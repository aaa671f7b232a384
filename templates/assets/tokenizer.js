"use strict";
// The tokenizer on document 01: Llama 3's own tokenizer (llama3-tokenizer-js, pinned in
// vendor.toml) carried packed in the page, unpacked when the reader first comes near it, run on
// the page's thread (50,000 characters encode in well under a second). What the reader types is
// only ever set as text.
(function () {
  const section = document.querySelector("[data-tokenizer]");
  if (!section) return;
  const area = section.querySelector("textarea[name=text]");
  const wrap = section.querySelector("input[name=template]");
  const status = section.querySelector(".tok-status");
  const error = section.querySelector(".tok-error");
  const out = (name) => section.querySelector(`[data-tok="${name}"]`);
  const longest = Number(section.getAttribute("data-longest"));
  const DRAWN = 2000; // pieces drawn at most; the count and the ids cover the whole text

  // GPT-2's byte-level alphabet, as the vocabulary writes each byte.
  const BYTE_OF = new Map();
  (function () {
    let extra = 0;
    for (let b = 0; b < 256; b++) {
      const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      BYTE_OF.set(String.fromCharCode(printable ? b : 256 + extra++), b);
    }
  })();
  const strict = new TextDecoder("utf-8", { fatal: true });
  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, "0")).join(" ");

  let loading = null;
  let tokenizer = null;

  function load() {
    if (loading) return loading;
    status.textContent = "Unpacking Llama 3's tokenizer…";
    section.setAttribute("data-state", "loading");
    loading = new Promise((resolve) => setTimeout(resolve, 0)).then(() => {
      const bytes = runbookUnpack(document.getElementById("tokenizer-js").textContent);
      return import(URL.createObjectURL(new Blob([bytes], { type: "text/javascript" })));
    }).then((module) => {
      tokenizer = module.default;
      section.setAttribute("data-state", "ready");
      status.textContent = "Llama 3's tokenizer is running in your browser.";
    }, (failure) => {
      loading = null;
      section.setAttribute("data-state", "unavailable");
      status.textContent = "The tokenizer could not start here (" + String(failure && failure.message || failure).slice(0, 120) +
        "); the figures above are the ones computed when the page was built.";
      throw failure;
    });
    return loading;
  }

  function pieceOf(id) {
    const written = tokenizer.vocabById[id];
    if (id >= 128000) return { text: written, whole: true, special: true, bytes: new TextEncoder().encode(written) };
    const bytes = Uint8Array.from(written, (ch) => BYTE_OF.get(ch));
    try {
      const text = strict.decode(bytes).replace(/ /g, "·").replace(/\n/g, "↵").replace(/\t/g, "→");
      return { text, whole: true, special: false, bytes };
    } catch (notWhole) {
      return { text: hex(bytes), whole: false, special: false, bytes };
    }
  }

  function show(text) {
    const words = text.trim() ? text.trim().split(/\s+/).length : 0;
    const chars = Array.from(text).length;
    // The ratios describe the reader's text; the count is what the engine tokenises.
    const own = tokenizer.encode(text, { bos: false, eos: false });
    const ids = wrap.checked ? tokenizer.encode(section.getAttribute("data-before") + text.trim() + section.getAttribute("data-after"),
      { bos: false, eos: false }) : own;
    out("tokens").textContent = ids.length.toLocaleString("en-GB");
    out("template").textContent = (ids.length - tokenizer.encode(text.trim(), { bos: false, eos: false }).length).toLocaleString("en-GB");
    section.querySelector(".tok-template-only").hidden = !wrap.checked;
    out("characters").textContent = chars.toLocaleString("en-GB");
    out("words").textContent = words ? words.toLocaleString("en-GB") : "—";
    out("per-token").textContent = own.length ? (chars / own.length).toFixed(2) : "—";
    out("per-word").textContent = own.length && words ? (own.length / words).toFixed(2) : "—";
    const pieces = out("pieces");
    const fragment = document.createDocumentFragment();
    ids.slice(0, DRAWN).forEach((id) => {
      const piece = pieceOf(id);
      const span = document.createElement("span");
      span.className = "tok-piece" + (piece.special ? " tok-special" : piece.whole ? "" : " tok-partial");
      span.textContent = piece.text;
      span.title = `id ${id} · bytes ${hex(piece.bytes)}`;
      fragment.appendChild(span);
    });
    pieces.replaceChildren(fragment);
    const more = out("more");
    more.hidden = ids.length <= DRAWN;
    more.textContent = ids.length > DRAWN ? `The first ${DRAWN.toLocaleString("en-GB")} tokens are drawn; all ${ids.length.toLocaleString("en-GB")} are counted and listed.` : "";
    out("ids").textContent = ids.join(", ");
  }

  function problem(text) {
    const length = Array.from(text).length;
    if (length > longest) {
      return `That is ${length.toLocaleString("en-GB")} characters; this page tokenises up to ${longest.toLocaleString("en-GB")} at a time. ` +
        "Trim it, or paste it in parts.";
    }
    return "";
  }

  let pending = 0;
  function update() {
    const asked = ++pending;
    load().then(() => {
      if (asked !== pending) return;
      const text = area.value;
      const wrong = problem(text);
      error.textContent = wrong;
      area.setAttribute("aria-invalid", wrong ? "true" : "false");
      if (wrong) return;
      try {
        show(text);
        section.setAttribute("data-state", "computed");
      } catch (failure) {
        error.textContent = "The tokenizer could not encode this text (" + String(failure && failure.message || failure).slice(0, 120) + ").";
      }
    }, () => {});
  }

  let timer = 0;
  area.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(update, 120); });
  wrap.addEventListener("change", update);
  area.addEventListener("focus", () => { load().catch(() => {}); }, { once: true });
  if ("IntersectionObserver" in window) {
    const watch = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) { watch.disconnect(); load().catch(() => {}); }
    }, { rootMargin: "400px" });
    watch.observe(section);
  }
  window.runbookTokenizer = { encode: (text) => load().then(() => tokenizer.encode(text, { bos: false, eos: false })) };
})();
