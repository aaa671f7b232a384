"""A document as it moves through the build, and the first stage: reading it from content/."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .catalogue import Entry
from .errors import ContentError, read_text, toml_error_line

FENCE = "+++"
REQUIRED = {"number": str, "kicker": str, "title": str, "lede": str}
OPTIONAL = {"title_em": str, "quote": str, "tiles": list}


@dataclass
class Page:
    """One document: filled in stage by stage, like MkDocs' Page."""

    entry: Entry
    path: Path
    meta: dict[str, Any]
    meta_lines: dict[str, int]
    body: str
    body_offset: int
    tokens: list = field(default_factory=list)
    meta_tokens: dict[str, list] = field(default_factory=dict)
    # What the stages derive, kept off the tokens, by id(token) (markdown-it's tokens are unhashable):
    hrefs: dict[int, str] = field(default_factory=dict)  # link stage: each checked link's target
    references: dict[int, tuple[str, str]] = field(default_factory=dict)  # compute: a reference's text, arithmetic
    values: dict[int, Any] = field(default_factory=dict)  # compute: what each directive's check derived
    charts: list[dict] = field(default_factory=list)
    parts: dict[str, Any] = field(default_factory=dict)  # render: the header's and body's HTML, for page and edition

    def line(self, body_line: int) -> int:
        """A line of the body (0-based, as markdown-it counts) as a line of the file."""
        return self.body_offset + body_line + 1

    def line_of(self, inline: Any) -> int:
        """The file line an inline token is on."""
        for children, line in self.inline_runs():
            for token in children:
                if token is inline:
                    return line
                line += token.type in ("softbreak", "hardbreak")
        return 1

    def inline_runs(self) -> Iterator[tuple[list, int]]:
        """Every run of inline tokens in the page (front matter, titles and tags included), with the
        file line it starts on."""
        for key, tokens in self.meta_tokens.items():
            yield tokens, self.meta_lines.get(key, 1)
        for token in self.tokens:
            line = self.line(token.map[0]) if token.map else 1
            if token.type == "inline":
                yield token.children or [], line
            for key in ("title_tokens", "tag_tokens", "subtitle_tokens"):
                if isinstance(token.meta, dict) and token.meta.get(key):
                    yield token.meta[key], line


RESERVED = "\ue000\ue001\ue002"  # the marks of runbook/links.py's alternatives: an id as its page and the edition read it


def read_page(entry: Entry, content: Path) -> Page:
    path = content / entry.file
    text = read_text(path)
    lines = text.split("\n")
    for number, line in enumerate(lines if any(c in text for c in RESERVED) else (), start=1):
        if marker := next((c for c in line if c in RESERVED), None):
            raise ContentError(path, number, f"the character U+{ord(marker):04X} (private use) marks ids and links "
                                             "for the build's two outputs; remove it from the text")
    if not lines or lines[0].strip() != FENCE:
        raise ContentError(path, 1, f"a document starts with front matter between two '{FENCE}' lines")
    try:
        close = next(i for i in range(1, len(lines)) if lines[i].strip() == FENCE)
    except StopIteration:
        raise ContentError(path, 1, f"front matter opened with '{FENCE}' is never closed") from None
    front = "\n".join(lines[1:close])
    try:
        meta = tomllib.loads(front)
    except tomllib.TOMLDecodeError as err:
        raise ContentError(path, toml_error_line(err) + 1, f"front matter is not valid TOML: {err}") from None
    meta_lines = _key_lines(lines[1:close])
    _check_meta(path, meta, meta_lines, entry)
    return Page(entry, path, meta, meta_lines, "\n".join(lines[close + 1:]), close + 1)


def _key_lines(lines: list[str]) -> dict[str, int]:
    """The file line of each key, as 'lede' or 'tiles.0.value', for error messages."""
    found: dict[str, int] = {}
    tables: dict[str, int] = {}
    prefix = ""
    for i, line in enumerate(lines, start=2):
        stripped = line.strip()
        if stripped.startswith("[["):
            name = stripped.strip("[]").strip()
            index = tables[name] = tables.get(name, -1) + 1
            prefix = f"{name}.{index}"
            found[prefix] = i
        elif "=" in stripped and not stripped.startswith("#"):
            key = stripped.split("=", 1)[0].strip()
            found.setdefault(f"{prefix}.{key}" if prefix else key, i)
    return found


def _check_meta(path: Path, meta: dict[str, Any], lines: dict[str, int], entry: Entry) -> None:
    for key in REQUIRED:
        if key not in meta:
            raise ContentError(path, 1, f"front matter lacks '{key}'")
    for key, value in meta.items():
        kind = REQUIRED.get(key) or OPTIONAL.get(key)
        if kind is None:
            known = ", ".join(sorted(REQUIRED) + sorted(OPTIONAL))
            raise ContentError(path, lines.get(key, 1), f"unknown front matter key '{key}' (known: {known})")
        if not isinstance(value, kind):
            raise ContentError(path, lines.get(key, 1), f"'{key}' should be {kind.__name__}, not {type(value).__name__}")
    if meta["number"] != entry.number:
        raise ContentError(path, lines.get("number", 1),
                           f"number is '{meta['number']}' but runbook.toml lists this file as '{entry.number}'")
    for i, tile in enumerate(meta.get("tiles", [])):
        if not isinstance(tile, dict) or set(tile) != {"value", "label"}:
            raise ContentError(path, lines.get(f"tiles.{i}", 1), "each [[tiles]] needs exactly a value and a label")
