"""The search index every page carries: each document's sections, fast answers, interview
questions and vocabulary, with where each one lives. Built from the parsed pages, embedded as
JSON, searched in the page as the reader types (templates/assets/search.js); nothing leaves it.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping

from calc.core.present import BadFilter, UnknownFact, figure

from .catalogue import Catalogue
from .dialect import REFERENCE
from .links import DOCUMENT
from .pages import Page

KINDS = {"section": "Section", "answer": "Fast answer", "question": "Interview question", "term": "Vocabulary"}


def _text(children: list, namespace: Mapping[str, Any]) -> str:
    """What a run of inline tokens says, its references filled in as the page prints them."""
    parts = []
    for c in children:
        if c.type in ("text", "code_inline"):
            parts.append(c.content)
        elif c.type == "calc_ref":
            parts.append(_plain(c.content, namespace))
    return " ".join("".join(parts).split())


def _plain(source: str, namespace: Mapping[str, Any]) -> str:
    """A heading's words, its references filled in as the page prints them."""
    def filled(match: re.Match) -> str:
        spec = " ".join(part for part in match.group(2, 3) if part)
        try:
            return figure(namespace, match.group(1) + (f"|{spec}" if spec else ""))[0]
        except (UnknownFact, BadFilter, TypeError):
            return ""
    return " ".join(REFERENCE.sub(filled, source).replace("`", "").split())


def entries(page: Page, namespace: Mapping[str, Any]) -> list[list[str]]:
    """[kind, text, anchor, document] for everything on the page a reader may look for."""
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
            found.append(["section", _plain(tokens[i + 1].content.partition(" | ")[0], namespace), section, number])
        elif token.type == "container_component_open" and token.meta["name"] == "fast-answers":
            in_answers = token.level + 1
        elif in_answers and token.type == "container_component_close" and token.level < in_answers:
            in_answers = 0
        elif in_answers and token.type == "heading_open" and token.tag == "h3":
            found.append(["answer", _plain(tokens[i + 1].content, namespace), str(token.attrGet("id")), number])
        elif token.type == "container_component_open" and token.meta["name"] == "question":
            role = _text(token.meta["title_tokens"], namespace)
            found.append(["question", f"{_text(token.meta['tag_tokens'], namespace)} ({role})", section, number])
        elif in_vocabulary and token.type == "inline":
            found += _terms(token.children or [], number, namespace)
    return found


def _terms(children: list, number: str, namespace: Mapping[str, Any]) -> list[list[str]]:
    """In a vocabulary section, each link is a term, found where the link points."""
    terms = []
    for j, child in enumerate(children):
        if child.type == "link_open":
            end = next(k for k in range(j, len(children)) if children[k].type == "link_close")
            target, _, anchor = str(child.attrGet("href")).partition("#")
            document = DOCUMENT.fullmatch(target)
            terms.append(["term", _text(children[j + 1:end], namespace), anchor, document.group(1) if document else target or number])
    return terms


def search_index(pages: list[Page], catalogue: Catalogue, namespace: Mapping[str, Any]) -> str:
    """The index as JSON: document numbers with their titles and files, then the entries."""
    documents = {e.number: [e.title, e.output_name] for e in catalogue.entries if e.written}
    files = {e.output_name: e.number for e in catalogue.entries}
    items = []
    for page in pages:
        for kind, text, anchor, where in entries(page, namespace):
            items.append([kind, text, anchor, files.get(where, where)])
    return json.dumps({"kinds": KINDS, "documents": documents, "entries": items}, ensure_ascii=False,
                      separators=(",", ":")).replace("</", "<\\/")
