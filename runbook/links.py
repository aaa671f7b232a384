"""Links between documents, checked before anything is written.

Content names another document by its number, `[the ladder](06#the-ladder)`, or a section of its
own page by `#anchor`; the build turns the number into the document's file and stops on a link to a
document that does not exist or has no content yet, or to an anchor its target does not have.
Web addresses pass as they are.

In the edition (every document in one file) each document's sections are prefixed with its number,
`d06-the-ladder`, and links between documents become links inside the file.
"""
from __future__ import annotations

import re
from typing import Iterator

from markdown_it.token import Token

from .catalogue import Catalogue, Entry
from .errors import ContentError
from .pages import RESERVED, Page

DOCUMENT = re.compile(r"(\d{2})(?:#(.*))?")
FILE = re.compile(r"([\w-]+\.html)(?:#(.*))?")
WEB = re.compile(r"(?:https?:|mailto:)", re.I)
FORMS = ("quick", "deep")


def anchors(page: Page) -> set[str]:
    """Every fragment a link may name on this page: its section headings, its corrections and its two forms."""
    return {t.attrGet("id") for t in page.tokens
            if t.type in ("heading_open", "container_component_open") and t.attrGet("id")} | set(FORMS)


def links(page: Page) -> Iterator[tuple[Token, int]]:
    for children, line in page.inline_runs():
        for child in children:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "link_open":
                yield child, line


def link_documents(page: Page, pages: dict[str, Page], catalogue: Catalogue) -> None:
    """Check every link on the page and point each document link at its file (`page.hrefs`)."""
    for token, line in links(page):
        href = str(token.attrGet("href") or "")
        if WEB.match(href):
            continue
        number, anchor = _target(page, href, line, catalogue)
        entry = catalogue.entry(number)
        if entry is None:
            known = ", ".join(e.number for e in catalogue.entries)
            raise ContentError(page.path, line, f"links to document '{number}', which runbook.toml does not list "
                                                f"(documents: {known})")
        if number not in pages:
            raise ContentError(page.path, line, f"links to document {number} ({entry.title}), which has no content "
                                                f"yet (content/{entry.file})")
        if anchor is not None and anchor not in anchors(pages[number]):
            raise ContentError(page.path, line, f"links to '#{anchor}' in document {number}, which has no such "
                                                f"section (its sections: {', '.join(sorted(anchors(pages[number])))})")
        target = "" if number == page.entry.number else entry.output_name
        page.hrefs[id(token)] = target + (f"#{anchor}" if anchor is not None else "")


def _target(page: Page, href: str, line: int, catalogue: Catalogue) -> tuple[str, str | None]:
    """The document number and anchor a link names."""
    if href.startswith("#"):
        return page.entry.number, href[1:]
    if found := DOCUMENT.fullmatch(href):
        return found.group(1), found.group(2)
    if found := FILE.fullmatch(href):
        entry = next((e for e in catalogue.entries if e.output_name == found.group(1)), None)
        if entry is not None:
            return entry.number, found.group(2)
    raise ContentError(page.path, line, f"links to '{href}', which is neither a document of the runbook "
                                        "(write '06' or '06#the-ladder') nor a web address")


def edition_anchor(number: str, anchor: str) -> str:
    return f"d{number}-{anchor}" if anchor else f"d{number}"


def edition_href(href: str, number: str, catalogue: Catalogue) -> str:
    """A checked link as it reads inside the edition: every document is a section of one file."""
    if WEB.match(href):
        return href
    if href.startswith("#"):
        return "#" + edition_anchor(number, href[1:])
    name, _, anchor = href.partition("#")
    entry = next(e for e in catalogue.entries if e.output_name == name)
    return "#" + edition_anchor(entry.number, anchor)


# A document is rendered once, for both places it lands: its own file and the edition. What differs
# between them (ids, and links that point at them) is written as both alternatives, and `placed`
# keeps one. The marks are private-use characters, which HTML escaping leaves alone (and a page that
# holds one is refused as it is read).
FIRST, SECOND, END = RESERVED
ALTERNATIVES = re.compile(f"{FIRST}([^{SECOND}]*){SECOND}([^{END}]*){END}")
IN_PAGE, IN_EDITION = 1, 2


def alternatives(in_page: str, in_edition: str) -> str:
    return f"{FIRST}{in_page}{SECOND}{in_edition}{END}"


def placed(html: str, where: int) -> str:
    """Rendered HTML as it reads in its page (IN_PAGE) or in the edition (IN_EDITION)."""
    return ALTERNATIVES.sub(lambda found: found.group(where), html)


def placed_anchor(env: dict, anchor: str) -> str:
    """A section's id: in the edition it carries its document's number, so ids stay unique in one file."""
    return alternatives(anchor, edition_anchor(env["page"].entry.number, anchor))


def placed_href(env: dict, href: str) -> str:
    """A checked link: in the edition every document is a section of one file; a correction drawn in
    the register keeps pointing at its own document."""
    in_page = href
    if "source" in env and href.startswith("#"):
        in_page = env["page"].entry.output_name + href
    return alternatives(in_page, edition_href(href, env["page"].entry.number, env["catalogue"]))


def placed_section(entry: Entry, section: str) -> str:
    """A link to a section of another document."""
    return alternatives(f"{entry.output_name}#{section}", "#" + edition_anchor(entry.number, section))


def landing(env: dict, page: Page) -> dict:
    """The render env for another document's tokens drawn on this page (the register's corrections)."""
    return {**env, "page": page, "source": page.entry.number}


def check_once_in_the_runbook(pages: list[Page], once: set[str]) -> None:
    """The directives named in `once` (a calculator, a chart) appear on one page only: the edition
    carries every page in one file, where two copies would share ids and fight over one another's inputs."""
    seen: dict[tuple[str, str], Page] = {}
    for page in pages:
        for token in page.tokens:
            if token.type == "directive" and token.info in once:
                key = (token.info, token.content.partition("|")[0].strip())
                first = seen.setdefault(key, page)
                if first is not page:
                    raise ContentError(page.path, page.line(token.map[0]),
                                       f"@{' '.join(key).strip()} is already in document {first.entry.number}; each "
                                       "calculator, chart and tokenizer appears once in the runbook (the edition "
                                       "holds every document in one file): link to it there instead")
