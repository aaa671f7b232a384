"use strict";
// Drill mode: practise the interview on any calculator. A case is drawn from the calculator's own
// options by a seeded generator (the seed is shown, so a case can be repeated), calc computes that
// case's figures in the page, and the reader is asked for them one at a time, in the order the page
// derives them, each checked to within TOLERANCE. A miss shows calc's worked step. The questions
// are the calculator's derived figures (those with arithmetic) from its live regions: nothing here
// knows what any calculator computes. The score lives in this page only.
runbookDocuments(function () {
  const TOLERANCE = 0.02;
  const QUESTIONS = 6;
  const ATTEMPTS = 24; // seeds tried in turn until a case the calculator accepts

  // mulberry32: a small, well-mixed generator; the same seed gives the same case everywhere.
  function generator(seed) {
    let state = seed >>> 0;
    return function () {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  // "53.34 GiB" → 53.34 and " GiB"; "$0.18" → 0.18 and "$" before it; "2.1×" → 2.1 and "×".
  function reading(text) {
    const match = /(-|−)?(\d[\d,]*(?:\.\d+)?)/.exec(text);
    if (!match) return null;
    const value = Number(match[2].replace(/,/g, "")) * (match[1] ? -1 : 1);
    const decimals = (match[2].split(".")[1] || "").length;
    return { value, decimals, before: text.slice(0, match.index).trim(), after: text.slice(match.index + match[0].length).trim() };
  }

  function typed(text) {
    const cleaned = text.trim().replace(/\u2212/g, "-").replace(/[\s,_]/g, "").replace(/^\$/, "");
    if (!/^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(cleaned)) return null;
    const value = Number(cleaned);
    return Number.isFinite(value) ? value : null;
  }

  function close(answer, truth) {
    const shown = 0.5 * Math.pow(10, -truth.decimals); // an answer rounded as the page rounds is right
    return Math.abs(answer - truth.value) <= Math.max(TOLERANCE * Math.abs(truth.value), shown);
  }

  function Drill(panel) {
    const name = panel.getAttribute("data-drill");
    const section = panel.closest("[data-calculator]");
    const form = section.querySelector(".calc-form");
    const seedBox = panel.querySelector("input[name=drill-seed]");
    const caseLine = panel.querySelector(".drill-case");
    const question = panel.querySelector(".drill-question");
    const askLine = panel.querySelector(".drill-ask");
    const unitLine = panel.querySelector(".drill-unit");
    const answerBox = panel.querySelector("input[name=drill-answer]");
    const feedback = panel.querySelector(".drill-feedback");
    const scoreLine = panel.querySelector(".drill-score");
    let current = null;
    let right = 0;
    let asked = 0;

    // The figures to ask for: derived ones (their arithmetic has an "="), in page order, once each.
    function figures() {
      const seen = new Set();
      return Array.from(document.querySelectorAll(`[data-live~="${name}"] .ref[data-ref]`))
        .filter((node) => !node.closest(".drill"))
        .map((node) => node.getAttribute("data-ref"))
        .filter((ref) => !ref.includes("|") && !seen.has(ref) && seen.add(ref))
        .filter((ref) => {
          const node = document.querySelector(`.ref[data-ref="${CSS.escape(ref)}"]`);
          return /=|→/.test(node.getAttribute("title") || "") && reading(node.textContent) !== null;
        })
        .slice(0, QUESTIONS);
    }

    function label(ref) {
      const parts = ref.split(".");
      return parts[parts.length - 1].replace(/_/g, " ") + (parts.length > 1 ? " (" + parts.slice(0, -1).join(" ") + ")" : "");
    }

    // A case: every choice the calculator offers drawn at random (a pasted config aside); numbers
    // keep the values the page was built with.
    function draw(seed) {
      const random = generator(seed);
      const values = {};
      const described = [];
      Array.from(form.elements).forEach((field) => {
        if (!field.name || field.name === "config") return;
        if (field.tagName === "SELECT") {
          const options = Array.from(field.options).filter((o) => o.value !== "custom");
          const chosen = options[Math.floor(random() * options.length)];
          values[field.name] = chosen.value;
          described.push(chosen.textContent.trim());
        } else {
          values[field.name] = field.defaultValue;
        }
      });
      return { values, described };
    }

    function newCase(seed) {
      const paths = figures();
      if (!paths.length) { caseLine.textContent = "This calculator has no derived figures to drill."; return; }
      caseLine.textContent = "Drawing a case…";
      question.hidden = true;
      feedback.textContent = "";
      let attempt = 0;
      const tryNext = () => {
        const trial = seed + attempt;
        const chosen = draw(trial);
        return window.runbookCalculator.compute({ calculator: name, values: chosen.values, paths }).then(({ answer }) => {
          if (answer.ok) return { seed: trial, chosen, answer, paths };
          attempt += 1;
          if (attempt >= ATTEMPTS) throw new Error("no case drawn from this seed is one the calculator can compute");
          return tryNext();
        });
      };
      tryNext().then(({ seed: used, chosen, answer, paths: asking }) => {
        seedBox.value = String(used);
        panel.setAttribute("data-case", JSON.stringify(chosen.values));
        current = {
          questions: asking.map((ref) => ({ ref, text: answer.refs[ref][0], worked: answer.refs[ref][1] }))
            .filter((q) => reading(q.text) !== null),
          index: 0,
        };
        caseLine.textContent = `Case ${used}: ${chosen.described.join(" · ")}${used !== seed ? ` (seed ${seed} drew a case the calculator refuses, so ${used})` : ""}.`;
        ask();
      }, (error) => { caseLine.textContent = `No case: ${error.message}. Try another seed.`; });
    }

    function ask() {
      if (current.index >= current.questions.length) {
        question.hidden = true;
        caseLine.textContent += " Done: draw another case, or repeat this seed.";
        return;
      }
      const q = current.questions[current.index];
      const truth = reading(q.text);
      question.setAttribute("data-asking", q.ref);
      askLine.textContent = `${current.index + 1} of ${current.questions.length}: the ${label(q.ref)}?${truth.before ? " (" + truth.before + ")" : ""}`;
      unitLine.textContent = truth.after;
      answerBox.value = "";
      answerBox.removeAttribute("aria-invalid");
      question.hidden = false;
      answerBox.focus();
    }

    function judge(revealed) {
      const q = current.questions[current.index];
      const truth = reading(q.text);
      if (!revealed) {
        const answer = typed(answerBox.value);
        if (answer === null) {
          answerBox.setAttribute("aria-invalid", "true");
          feedback.textContent = `Type a number${truth.after ? " in " + truth.after : ""}, such as ${truth.value}.`;
          return;
        }
        asked += 1;
        if (close(answer, truth)) {
          right += 1;
          feedback.textContent = `Right: ${q.text}.`;
        } else {
          feedback.textContent = `Not quite: you said ${answerBox.value.trim()}; calc says ${q.text}. Worked: ${q.worked}`;
        }
      } else {
        asked += 1;
        feedback.textContent = `${q.text}. Worked: ${q.worked}`;
      }
      scoreLine.textContent = `Score: ${right} of ${asked} right.`;
      current.index += 1;
      ask();
    }

    panel.querySelector("[data-drill-action=new]").addEventListener("click", () => {
      newCase(Math.floor(Math.random() * 900000) + 100000);
    });
    panel.querySelector("[data-drill-action=repeat]").addEventListener("click", () => {
      const seed = typed(seedBox.value);
      if (seed === null || seed < 0 || !Number.isInteger(seed) || seed > 4294967295) {
        seedBox.setAttribute("aria-invalid", "true");
        caseLine.textContent = "A seed is a whole number from 0 to 4,294,967,295.";
        return;
      }
      seedBox.removeAttribute("aria-invalid");
      newCase(seed);
    });
    question.addEventListener("submit", (event) => { event.preventDefault(); judge(false); });
    panel.querySelector("[data-drill-action=reveal]").addEventListener("click", () => judge(true));
  }

  document.querySelectorAll("[data-drill]").forEach(Drill);
});
