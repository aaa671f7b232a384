"""Where each number on a page comes from, for its popover: its formula, its arithmetic, the facts
it was made of (each explained the same way, so a reader can walk back to a config field or a
datasheet line), its source, and the document that derives it.

What a result was made of is what its computation recorded (calc.core.arith, read by
calc.core.provenance); this module adds what only the build knows: which document derives each
section of facts, and the JSON each page's popovers read.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from calc.core.present import resolve
from calc.core.provenance import Provenance
from calc.core.units import Result

from .pages import Page


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
