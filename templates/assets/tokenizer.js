"use strict";
// The tokenizer on document 01: Llama 3's own tokenizer (llama3-tokenizer-js, pinned in
// vendor.toml) carried packed in the page, unpacked when the reader first comes near it, run on
// the page's thread (50,000 characters encode in well under a second). What the reader types is
// only ever set as text.
runbookDocuments(function () {
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
  let framing = null; // the template's ids before and after the message: special tokens split the text at both joins

  function load() {
    if (loading) return loading;
    status.textContent = "Unpacking Llama 3's tokenizer…";
    section.setAttribute("data-state", "loading");
    loading = new Promise((resolve) => setTimeout(resolve, 0)).then(() => {
      const bytes = runbookUnpack(document.getElementById("tokenizer-js").textContent);
      return import(URL.createObjectURL(new Blob([bytes], { type: "text/javascript" })));
    }).then((module) => {
      tokenizer = module.default;
      framing = {
        before: tokenizer.encode(section.getAttribute("data-before"), { bos: false, eos: false }),
        after: tokenizer.encode(section.getAttribute("data-after"), { bos: false, eos: false }),
      };
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
      return { text: visible(strict.decode(bytes)), whole: true, special: false, bytes };
    } catch (notWhole) {
      return { text: hex(bytes), whole: false, special: false, bytes };
    }
  }

  // Whitespace and invisible characters made visible: control characters as their Unicode pictures,
  // format characters (zero-width space, byte-order mark, …) by code point.
  function visible(text) {
    return text.replace(/ /g, "·").replace(/\n/g, "↵").replace(/\t/g, "→")
      .replace(/[\u0000-\u001f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0))).replace(/\u007f/g, "␡")
      .replace(/[\u00ad\u0085\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]/g,
        (c) => "⟨U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "⟩");
  }

  function show(text) {
    const words = text.trim() ? text.trim().split(/\s+/).length : 0;
    const chars = Array.from(text).length;
    // One encoding per change: the template's ids are fixed and join the message's at special tokens.
    // The ratios describe the reader's text; the count is what the engine tokenises.
    const message = wrap.checked ? text.trim() : text;
    const own = tokenizer.encode(message, { bos: false, eos: false });
    const ids = wrap.checked ? framing.before.concat(own, framing.after) : own;
    out("tokens").textContent = ids.length.toLocaleString("en-GB");
    out("template").textContent = (framing.before.length + framing.after.length).toLocaleString("en-GB");
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

  // A refused text leaves the last figures in place, dimmed, so they are not read as this text's.
  function refuse(message) {
    error.textContent = message;
    area.setAttribute("aria-invalid", message ? "true" : "false");
    section.toggleAttribute("data-stale", Boolean(message));
    if (message) section.setAttribute("data-state", "invalid");
  }

  let pending = 0;
  function update() {
    const asked = ++pending;
    load().then(() => {
      if (asked !== pending) return;
      const text = area.value;
      const wrong = problem(text);
      refuse(wrong);
      if (wrong) return;
      try {
        show(text);
        section.setAttribute("data-state", "computed");
      } catch (failure) {
        // The library's encoder runs out of stack on one unbroken run of about a hundred thousand tokens.
        refuse(failure instanceof RangeError
          ? "This text has a run of symbols with no space or line break that becomes too many tokens to encode at once; break it up, or paste less."
          : "The tokenizer could not encode this text (" + String(failure && failure.message || failure).slice(0, 120) + ").");
      }
    }, () => {});
  }

  let timer = 0;
  // Long texts wait for a longer pause: encoding 50,000 characters takes the page's thread for a while.
  area.addEventListener("input", () => {
    clearTimeout(timer);
    if (tokenizer) section.setAttribute("data-state", "pending");
    timer = setTimeout(update, area.value.length > 10000 ? 400 : 120);
  });
  wrap.addEventListener("change", update);
  area.addEventListener("focus", () => { load().catch(() => {}); }, { once: true });
  if ("IntersectionObserver" in window) {
    const watch = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) { watch.disconnect(); load().catch(() => {}); }
    }, { rootMargin: "400px" });
    watch.observe(section);
  }
  // Back/forward may restore the form: show what it now holds.
  window.addEventListener("pageshow", () => {
    if (wrap.checked || area.value !== area.defaultValue) update();
  });
  window.addEventListener("beforeprint", () => { section.querySelector(".tok-ids-box").open = true; });
  window.runbookTokenizer = { encode: (text) => load().then(() => tokenizer.encode(text, { bos: false, eos: false })) };
});
