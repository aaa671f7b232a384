"""The search index every page carries: each document's sections, fast answers, interview
questions and vocabulary, with where each one lives. Built once references are resolved and links
checked, embedded as JSON, searched in the page as the reader types (templates/assets/search.js); nothing leaves it.
"""
from __future__ import annotations

import json
from typing import Callable

from markdown_it.token import Token

from .catalogue import Catalogue
from .pages import Page

KINDS = {"section": "Section", "answer": "Fast answer", "question": "Interview question", "term": "Vocabulary"}

# A calc reference's text as the page prints it (the compute stage's resolution, runbook/compute.py).
ReferenceText = Callable[[Page, Token], str]


def _text(page: Page, children: list, reference: ReferenceText) -> str:
    """What a run of inline tokens says, its references filled in as the page prints them."""
    parts = []
    for c in children:
        if c.type in ("text", "code_inline"):
            parts.append(c.content)
        elif c.type == "calc_ref":
            parts.append(reference(page, c))
    return " ".join("".join(parts).split())


def entries(page: Page, reference: ReferenceText) -> list[list[str]]:
    """[kind, text, anchor, document or file] for everything on the page a reader may look for."""
    number = page.entry.number
    found: list[list[str]] = []
    section = ""
    in_answers = 0
    in_vocabulary = False
    tokens = page.tokens
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            section = str(token.attrGet("id"))
            in_vocabulary = "vocabulary" in section
            found.append(["section", _text(page, tokens[i + 1].children or [], reference), section, number])
        elif token.type == "container_component_open" and token.meta["name"] == "fast-answers":
            in_answers = token.level + 1
        elif in_answers and token.type == "container_component_close" and token.level < in_answers:
            in_answers = 0
        elif in_answers and token.type == "heading_open" and token.tag == "h3":
            found.append(["answer", _text(page, tokens[i + 1].children or [], reference), str(token.attrGet("id")), number])
        elif token.type == "container_component_open" and token.meta["name"] == "question":
            role = _text(page, token.meta["title_tokens"], reference)
            found.append(["question", f"{_text(page, token.meta['tag_tokens'], reference)} ({role})", section, number])
        elif in_vocabulary and token.type == "inline":
            found += _terms(page, token.children or [], reference)
    return found


def _terms(page: Page, children: list, reference: ReferenceText) -> list[list[str]]:
    """In a vocabulary section, each link is a term, found where the link points (as checked:
    runbook/links.py)."""
    terms = []
    for j, child in enumerate(children):
        if child.type == "link_open":
            end = next(k for k in range(j, len(children)) if children[k].type == "link_close")
            target, _, anchor = str(child.attrGet("href")).partition("#")
            terms.append(["term", _text(page, children[j + 1:end], reference), anchor, target or page.entry.number])
    return terms


def search_index(pages: list[Page], catalogue: Catalogue, reference: ReferenceText) -> str:
    """The index as JSON: document numbers with their titles and files, then the entries."""
    documents = {e.number: [e.title, e.output_name] for e in catalogue.entries if e.written}
    files = {e.output_name: e.number for e in catalogue.entries}
    items = []
    for page in pages:
        for kind, text, anchor, where in entries(page, reference):
            items.append([kind, text, anchor, files.get(where, where)])
    return json.dumps({"kinds": KINDS, "documents": documents, "entries": items}, ensure_ascii=False,
                      separators=(",", ":")).replace("</", "<\\/")
