"""The site as it moves through the build, like MkDocs' config, files and nav passed to each step:
what is read, what the stages make of it, and what will be written."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markdown_it import MarkdownIt

from .catalogue import Catalogue
from .pages import Page
from .provenance import Explainer
from .register import Namespace


@dataclass
class Site:
    content: Path
    out: Path
    only: str | None  # one document's number (--doc), or None for the whole runbook
    templates: Path
    attachments: dict[str, bytes]  # written with the site and offered on its contents page (the PDFs)
    catalogue: Catalogue | None = None
    pages: list[Page] = field(default_factory=list)
    md: MarkdownIt | None = None
    register: Page | None = None  # the page that shows the corrections register
    namespace: Namespace | None = None
    jinja: Environment | None = None
    every_fact: list[tuple[str, Any]] = field(default_factory=list)
    derived: list = field(default_factory=list)  # every number calc can print, for the typed-number guard
    explain: Explainer | None = None
    outputs: dict[str, bytes] = field(default_factory=dict)

    @property
    def chosen(self) -> list[Page]:
        """The pages this build writes."""
        return [page for page in self.pages if self.only is None or page.entry.number == self.only]

    @property
    def computed(self) -> list[Page]:
        """The pages whose references and components are resolved: the written ones, and every page
        when the register is written, since it draws every document's corrections."""
        return self.pages if self.register in self.chosen else self.chosen
