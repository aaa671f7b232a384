"""Where each number on a page comes from, for its popover: its formula, its arithmetic, the facts
its arithmetic is made of (each explained the same way, so a reader can walk back to a config field
or a datasheet line), its source, and the document that derives it.

calc's results carry their arithmetic as text, not links to their operands; the operands are found
here by what they print, among the facts of the result's own section and the reference stack's
inputs (its model config, its card's datasheet, its named assumptions). An operand several of them
print goes to the nearest (the longest shared prefix of names); a bare number (32, 8, 16: many
things print those) only to a fact beside the result, and only if it is the one there; anything
else is left as arithmetic, never guessed.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from calc.present import leaves, show
from calc.units import Result

from .pages import Page

OPERAND = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?: ?(?:[KMGT]i?B(?:/s)?|B|[KMGPT]?FLOP(?:/s)?|FLOP/B|ms|µs|s|tok/s|"
                     r"tokens?|users?|blocks?|%|×))?")


GIVEN = ("stack.", "model.", "card.")  # the reference stack: its config, its datasheet, its assumptions


class Provenance:
    """Every fact of a namespace, and which facts each result's arithmetic uses."""

    def __init__(self, namespace: Mapping[str, Any]):
        self.facts: dict[str, Any] = dict(leaves(namespace))
        self.printed: dict[str, list[str]] = {}
        for path, value in self.facts.items():
            for text in _printings(value):
                self.printed.setdefault(text, []).append(path)

    def inputs(self, path: str) -> list[str]:
        """The facts a result's arithmetic is made of, in the order it uses them."""
        value = self.facts.get(path)
        if not isinstance(value, Result) or not value.worked or " = " not in value.worked and "→" not in value.worked:
            return []
        left = value.worked.split(" = ", 1)[0]
        found: list[str] = []
        for operand in OPERAND.findall(left):
            bare = not any(c.isalpha() or c in "%×" for c in operand)
            near = [p for p in self.printed.get(operand.strip(), []) if p != path
                    and (_shared(p, path) >= 2 if bare else _shared(p, path) >= 1 or p.startswith(GIVEN))]
            # A number several nearby facts print is left as arithmetic rather than guessed.
            best = max(near, key=lambda p: (_shared(p, path), -len(p)), default=None)
            ties = [p for p in near if _shared(p, path) == _shared(best, path)] if best else []
            if best and (len(ties) == 1 or not bare) and best not in found:
                found.append(best)
        return found

    def closure(self, paths: Iterable[str]) -> list[str]:
        """The paths and every fact they rest on, walked to the end."""
        seen: list[str] = []
        queue = [p for p in paths if p in self.facts]
        while queue:
            path = queue.pop(0)
            if path in seen:
                continue
            seen.append(path)
            queue += [p for p in self.inputs(path) if p not in seen]
        return seen


def _printings(value: Any) -> set[str]:
    """The ways a worked line may print this fact: as shown, as an operand, and (for a size)
    in bytes, as the lines that divide sizes print them."""
    if isinstance(value, Result):
        found = {str(value), value.operand}
        if value.unit.symbol.endswith("B") and value.value >= 1:
            found.add(f"{round(value.value):,} B")
        return found
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {show(value)}
    return set()


def _shared(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        count += 1
    return count


def source_of(path: str, namespace: Mapping[str, Any]) -> str:
    """The published source behind a fact: the model's config or the card's datasheet, where the
    fact is one of their fields."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            owner = namespace
            for part in parts[:i]:
                owner = owner[part] if isinstance(owner, Mapping) else getattr(owner, part)
        except (KeyError, AttributeError):
            continue
        source = getattr(owner, "source", None)
        if isinstance(source, str) and source:
            return source
    return ""


def deriving_documents(pages: list[Page]) -> dict[str, str]:
    """Each fact's home: the first document, in reading order, that shows its arithmetic (a worked
    line), or else the first that shows it at all."""
    worked: dict[str, str] = {}
    shown: dict[str, str] = {}
    for page in pages:
        number = page.entry.number
        for children, _ in page.inline_runs():
            for token in children:
                if token.type == "calc_ref" and "ref" in token.meta:
                    path, _, spec = token.meta["ref"].partition("|")
                    (worked if spec.strip() == "worked" else shown).setdefault(path, number)
        for token in page.tokens:
            if token.type == "directive" and token.info == "worked":
                for path in token.content.partition("|")[0].split(","):
                    worked.setdefault(path.strip(), number)
    return {**shown, **worked}


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
    for path in provenance.closure(dict.fromkeys(shown)):
        value = provenance.facts[path]
        entry: dict[str, Any] = {"text": show(value)}
        if isinstance(value, Result):
            entry.update(formula=value.formula, worked=value.worked if value.worked != str(value) else "")
        if inputs := provenance.inputs(path):
            entry["inputs"] = inputs
        if source := source_of(path, namespace):
            entry["source"] = source
        if path in homes:
            entry["home"] = homes[path]
        facts[path] = entry
    return json.dumps({"facts": facts, "documents": documents}, ensure_ascii=False, separators=(",", ":"))
