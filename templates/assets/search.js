"use strict";
// Search every document, offline, as the reader types. The index travels in the page
// (runbook/search.py): each document's sections, fast answers, interview questions and vocabulary.
// Results are links to the exact place; in the edition, to the place inside this file.
runbookDocuments(function () {
  const box = document.getElementById("search-box");
  const list = document.getElementById("search-results");
  const status = document.querySelector(".search-status");
  const source = document.getElementById("search-index");
  if (!box || !list || !source) return;
  const index = JSON.parse(source.textContent);
  const edition = document.body.hasAttribute("data-edition");
  const RANK = { term: 0, section: 1, answer: 2, question: 3 };
  const MOST = 12;
  const fold = (text) => text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  const items = index.entries.map(([kind, text, anchor, number]) => ({
    kind, text, anchor, number,
    words: fold(text).split(/[^a-z0-9]+/).filter(Boolean),
    where: fold(index.documents[number] ? index.documents[number][0] : ""),
  }));

  function href(item) {
    if (edition) return "#d" + item.number + (item.anchor ? "-" + item.anchor : "");
    return index.documents[item.number][1] + (item.anchor ? "#" + item.anchor : "");
  }

  // Every word typed must begin a word of the entry (or of its document's title); entries whose
  // own words match come first, then by kind, then shorter text.
  function search(query) {
    const wanted = fold(query).split(/[^a-z0-9]+/).filter(Boolean);
    if (!wanted.length) return [];
    const found = [];
    items.forEach((item) => {
      let own = 0;
      for (const word of wanted) {
        if (item.words.some((w) => w.startsWith(word))) own++;
        else if (!item.where.split(/[^a-z0-9]+/).some((w) => w.startsWith(word))) return;
      }
      found.push({ item, score: (wanted.length - own) * 10 + RANK[item.kind] });
    });
    found.sort((a, b) => a.score - b.score || a.item.text.length - b.item.text.length);
    return found.slice(0, MOST).map((f) => f.item);
  }

  function show(results, query) {
    list.replaceChildren(...results.map((item) => {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = href(item);
      const text = document.createElement("span");
      text.className = "search-text";
      text.textContent = item.text;
      const where = document.createElement("span");
      where.className = "search-where";
      where.textContent = index.kinds[item.kind] + " · " + item.number + " " + index.documents[item.number][0];
      a.append(text, where);
      a.addEventListener("click", close);
      li.append(a);
      return li;
    }));
    const open = query.trim() !== "";
    list.hidden = !open;
    if (open && !results.length) {
      const li = document.createElement("li");
      li.className = "search-none";
      li.textContent = "Nothing found for that: try fewer or shorter words.";
      list.append(li);
    }
    status.textContent = open ? results.length + (results.length === 1 ? " result" : " results") : "";
  }

  function close() {
    list.hidden = true;
  }

  box.addEventListener("input", () => show(search(box.value), box.value));
  box.addEventListener("keydown", (event) => {
    const first = list.querySelector("a");
    if (event.key === "Enter" && first) { event.preventDefault(); first.click(); location.href = first.href; }
    else if (event.key === "ArrowDown" && first) { event.preventDefault(); first.focus(); }
    else if (event.key === "Escape") { box.value = ""; show([], ""); }
  });
  list.addEventListener("keydown", (event) => {
    const links = Array.from(list.querySelectorAll("a"));
    const at = links.indexOf(document.activeElement);
    if (event.key === "ArrowDown" && at < links.length - 1) { event.preventDefault(); links[at + 1].focus(); }
    else if (event.key === "ArrowUp") { event.preventDefault(); (at > 0 ? links[at - 1] : box).focus(); }
    else if (event.key === "Escape") { close(); box.focus(); }
  });
  document.addEventListener("click", (event) => { if (!event.target.closest(".search")) close(); });
});
