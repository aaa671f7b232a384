"""What the runbook counts about itself, and the corrections register gathered from every document.

Each document keeps its own "what this page corrects"; document 00's register is built from them,
never kept by hand, so it always equals their union. Its tiles (documents, formulas, corrections)
are counted here too, and content refers to them as `{{ runbook.documents }}` and so on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from typing import Iterator

from markdown_it.token import Token

from calc.facts import Facts
from calc.specs.stack import REFERENCE

from .catalogue import Entry
from .components.base import container_span, is_container
from .pages import Page


@dataclass(frozen=True)
class Correction:
    """One correction, as its document wrote it: its tokens, from `::: correction` to its close."""

    page: Page = field(hash=False, compare=False)
    section: str  # its anchor in its document (`was-…`)
    tokens: list[Token] = field(hash=False, compare=False)

    @property
    def entry(self) -> Entry:
        return self.page.entry

    @property
    def claim(self) -> str:
        return self.tokens[0].meta["args"]


@dataclass(frozen=True)
class Runbook:
    """The counts document 00's tiles show."""

    documents: int
    corrections: int
    formulas: int


def corrections(page: Page) -> list[Correction]:
    found = []
    section = ""
    tokens = page.tokens
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            section = str(token.attrGet("id") or "")
        if is_container(token, "correction"):
            found.append(Correction(page, str(token.attrGet("id") or section), tokens[container_span(tokens, i)]))
    return found


def gathered(pages: list[Page], register: Page | None) -> list[Correction]:
    """Every document's corrections in reading order, the register's own page left out."""
    return [c for page in pages if page is not register for c in corrections(page)]


def counts(pages: list[Page], register: Page | None) -> Runbook:
    formulas = sum(1 for t in register.tokens if t.type == "directive" and t.info == "formula") if register else 0
    return Runbook(documents=len(pages), corrections=len(gathered(pages, register)), formulas=formulas)


def register_page(pages: list[Page]) -> Page | None:
    """The page that shows the register: the one with an @register line."""
    return next((p for p in pages if any(t.type == "directive" and t.info == "register" for t in p.tokens)), None)


class Namespace(Facts):
    """What content refers to: calc's facts for the reference stack, and the runbook's own counts."""

    def __init__(self, runbook: Runbook):
        super().__init__(REFERENCE)
        self._made["runbook"] = runbook

    def __iter__(self) -> Iterator[str]:
        yield from super().__iter__()
        yield "runbook"

    def __len__(self) -> int:
        return super().__len__() + 1
