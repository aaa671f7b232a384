"""Where each number on a page comes from, for its popover: its formula, its arithmetic, the facts
its arithmetic is made of (each explained the same way, so a reader can walk back to a config field
or a datasheet line), its source, and the document that derives it.

calc's results carry their arithmetic as text, not links to their operands; the operands are found
here by what they print, among the facts of the result's own section and the reference stack's
inputs (its model config, its card's datasheet, its named assumptions). An operand several of them
print goes to the nearest (the longest shared prefix of names); a bare number below ten to nothing,
and up to four digits (32, 128: many things print those) only to a sibling of the result, and only
if it is the one there; anything else is left as arithmetic, never guessed.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from calc.core.present import resolve, show
from calc.core.provenance import INTERMEDIATE, Provenance as Recorded
from calc.core.units import Result

from .pages import Page

OPERAND = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?: ?(?:[KMGT]i?B(?:/s)?|B|[KMGPT]?FLOP(?:/s)?|FLOP/B|ms|µs|s|tok/s|"
                     r"tokens?|users?|blocks?|%)|×(?! ))?")  # 2.5× is a ratio; "32 × 8" multiplies


GIVEN = ("stack.", "model.", "card.")  # the reference stack: its config, its datasheet, its assumptions


class Provenance(Recorded):
    """Every fact of a namespace, and which facts each result was made of: as its computation
    recorded them, or, for a result whose module does not record them yet, as its worked line
    prints them."""

    def __init__(self, facts: Iterable[tuple[str, Any]], namespace: Mapping[str, Any] | None = None):
        super().__init__(facts, namespace)
        self.printed: dict[str, list[str]] = {}
        for path, value in self.facts.items():
            for text in _printings(value):
                self.printed.setdefault(text, []).append(path)

    def inputs(self, path: str) -> list[str]:
        if self.recorded(path) or INTERMEDIATE in path:
            return super().inputs(path)
        return self._printed_inputs(path)

    def _printed_inputs(self, path: str) -> list[str]:
        """The facts a result's arithmetic is made of, found by what its worked line prints."""
        value = self.facts.get(path)
        if not isinstance(value, Result) or not value.worked:
            return []
        if value.worked == str(value):  # a given: the stack's own fact it repeats, whose source is known
            same = sorted((p for p in self.printed.get(str(value), []) if p.startswith(GIVEN) and p != path), key=len)
            return same[:1]
        left = value.worked.split(" = ", 1)[0]
        operands = OPERAND.findall(left)
        terms = _terms(value.formula)
        if len(terms) != len(operands):
            terms = [""] * len(operands)
        found: list[str] = []
        for operand, term in zip(operands, terms):
            if (field := self._named_field(operand.strip(), term, path)) and field not in found:
                found.append(field)
                continue
            # A bare number below ten is anything; up to four digits (32, 128, 256), only a sibling
            # of the result's; a long one (14,336) is distinctive wherever it is.
            number = float(operand.replace(",", "")) if not any(c.isalpha() or c in "%×" for c in operand) else None
            if number is not None and number < 10:
                continue
            bare = number is not None and number < 10_000
            siblings = path.count(".")
            near = [p for p in self.printed.get(operand.strip(), []) if p != path
                    and (_shared(p, path) >= siblings if bare else _shared(p, path) >= 1 or p.startswith(GIVEN))]
            # A number several nearby facts print is left as arithmetic rather than guessed.
            best = max(near, key=lambda p: (_shared(p, path), -len(p)), default=None)
            ties = [p for p in near if _shared(p, path) == _shared(best, path)] if best else []
            if not near and number is not None and len(re.sub(r"\D", "", operand)) >= 7:
                # A count this long (8,030,261,248) is the same quantity wherever it is printed:
                # the shortest-named fact that derives it.
                near = [p for p in self.printed.get(operand.strip(), []) if p != path and " = " in
                        getattr(self.facts[p], "worked", "")]
                best = min(near, key=lambda p: (len(p), p), default=None)
                ties = [best] if best else []
            if best and (len(ties) == 1 or not bare) and best not in found:
                found.append(best)
        return found

    def _named_field(self, operand: str, term: str, path: str) -> str | None:
        """The one fact, nearest the result (the reference stack's own, or its section's), that prints
        this operand and whose name holds every word of the formula's term in its place: `32` under
        `layers` is num_hidden_layers, not num_attention_heads, which prints 32 too."""
        wanted = _words(term)
        if not wanted:
            return None
        fields = [p for p in self.printed.get(operand, []) if p != path and wanted <= _words(p.rsplit(".", 2)[-1])
                  and (p.startswith(GIVEN) or _shared(p, path) >= 1)]
        nearest = max((_shared(p, path) for p in fields), default=0)
        fields = sorted((p for p in fields if _shared(p, path) == nearest), key=len)
        # Among equals the shortest: stack.model's head_dim, not that of the model stack.parallel splits.
        return fields[0] if fields and (len(fields) == 1 or len(fields[0]) < len(fields[1])) else None



def _printings(value: Any) -> set[str]:
    """The ways a worked line may print this fact: as shown, as an operand, and (for a size)
    in bytes, as the lines that divide sizes print them."""
    if isinstance(value, Result):
        found = {str(value), value.operand}
        if value.unit.symbol.endswith("B") and value.value >= 1:
            found |= {f"{round(value.value):,} B", f"{int(value.value):,} B"}  # rounded, or whole bytes that fit
        return found
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {show(value)}
    return set()


# Words a formula's term shares with a field's name once both are spelt out; the rest say nothing.
SPELT_OUT = {"kv": {"key", "value"}, "params": {"parameters"}, "experts": {"experts"}}
QUIET = {"num", "of", "per", "the", "a", "an", "in", "each", "one", "s", "model", "stack", "card", "fields"}


def _words(name: str) -> set[str]:
    found: set[str] = set()
    for word in re.findall(r"[a-z]+", name.lower()):
        found |= SPELT_OUT.get(word, {word})
    return found - QUIET


def _terms(formula: str) -> list[str]:
    """A formula's operands in order ("2 × layers × kv_heads" → 2, layers, kv_heads), to set beside
    the numbers its worked line prints in the same places."""
    return [t.strip() for t in re.split(r"[×÷+−()⌈⌉⌊⌋]|\s-\s", formula.split(" = ", 1)[0]) if t.strip()]


def _shared(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        count += 1
    return count


def deriving_documents(pages: list[Page]) -> dict[str, str]:
    """Each section of facts' home: the document that refers to that section most (the ladder's
    is document 06, the time model's 05), earlier documents winning ties."""
    counts: dict[str, dict[str, int]] = {}
    for page in pages:
        for children, _ in page.inline_runs():
            for token in children:
                if token.type == "calc_ref" and "ref" in token.meta:
                    section = token.meta["ref"].split(".", 1)[0]
                    mentions = counts.setdefault(section, {})
                    mentions[page.entry.number] = mentions.get(page.entry.number, 0) + 1
    return {section: max(sorted(mentions), key=lambda number: mentions[number]) for section, mentions in counts.items()}


@dataclass(frozen=True)
class Explainer:
    """What the number popovers of a set of pages need, as JSON: every fact they show and all those
    rest on, and the documents' titles and files for "derived in"."""

    provenance: Provenance
    namespace: Mapping[str, Any]
    homes: dict[str, str]
    documents: dict[str, list[str]]

    def __call__(self, pages: list[Page]) -> str:
        return popovers(pages, self.provenance, self.namespace, self.homes, self.documents)


def popovers(pages: list[Page], provenance: Provenance, namespace: Mapping[str, Any], homes: dict[str, str],
             documents: dict[str, list[str]]) -> str:
    shown = [token.meta["ref"].partition("|")[0] for page in pages for children, _ in page.inline_runs()
             for token in children if token.type == "calc_ref" and "ref" in token.meta]
    shown += [path.strip() for page in pages for token in page.tokens if token.type == "directive"
              and token.info == "worked" for path in token.content.partition("|")[0].split(",")]
    facts = {}
    # A number deeper than the walk that lists every fact (a published log's rung, say) is still shown
    # with its own formula and arithmetic, read where the page read it.
    deeper = {path: resolve(namespace, path) for path in dict.fromkeys(shown) if path not in provenance.facts}
    for path in provenance.closure(dict.fromkeys(shown)) + [p for p, v in deeper.items() if isinstance(v, Result)]:
        entry = provenance.entry(path, deeper.get(path))
        if path.split(".", 1)[0] in homes:
            entry["home"] = homes[path.split(".", 1)[0]]
        facts[path] = entry
    return json.dumps({"facts": facts, "documents": documents}, ensure_ascii=False, separators=(",", ":"))
