"""`@table hardware.phase_table`: a table calc builds from a list (the cards it knows, say), so an entry
added to the list gains its row on every page that draws the table.

The directive becomes the tokens a Markdown table of `{{ references }}` parses to, before anything else
reads the page (the compute stage calls `expand` first): each cell is then resolved, checked, drawn and
given its popover exactly as a reference typed into a table is.
"""
from __future__ import annotations

from typing import Any, Mapping

from markdown_it.token import Token

from calc.core.present import Cell, Table, UnknownFact, resolve

from ..errors import ContentError
from ..pages import Page
from .base import BadArguments


def check(args: str, namespace: Mapping[str, Any]) -> Table:
    path, _, caption = args.partition("|")
    if caption.strip():
        raise BadArguments("a table takes no caption: write what it shows in the paragraph around it")
    if not path.strip():
        raise BadArguments("name the table to draw, such as hardware.datasheet_table")
    try:
        table = resolve(namespace, path.strip())
    except UnknownFact as err:
        raise BadArguments(f"unknown calc reference '{err.path}'") from None
    if not isinstance(table, Table):
        raise BadArguments(f"'{path.strip()}' is not a table")
    return table


def expand(page: Page, namespace: Mapping[str, Any]) -> None:
    """Each `@table` on the page becomes its table's tokens."""
    expanded = []
    for token in page.tokens:
        if token.type != "directive" or token.info != "table":
            expanded.append(token)
            continue
        try:
            expanded += table_tokens(token, namespace)
        except BadArguments as err:
            raise ContentError(page.path, page.line(token.map[0]), f"@table: {err}") from None
    page.tokens = expanded



def table_tokens(directive: Token, namespace: Mapping[str, Any]) -> list[Token]:
    """The tokens markdown-it makes of the table written out: a head row, then a row per entry."""
    path = directive.content.partition("|")[0].strip()
    table = check(directive.content, namespace)
    home = path.rpartition(".")[0]
    level = directive.level

    def block(kind: str, tag: str, nesting: int, depth: int) -> Token:
        return Token(kind, tag, nesting, map=directive.map, level=level + depth, block=True)

    def row(cells: tuple[str | Cell, ...], cell_tag: str) -> list[Token]:
        out = [block("tr_open", "tr", 1, 2)]
        for cell in cells:
            out += [block(f"{cell_tag}_open", cell_tag, 1, 3), _inline(cell, home, directive.map, level + 4),
                    block(f"{cell_tag}_close", cell_tag, -1, 3)]
        return out + [block("tr_close", "tr", -1, 2)]

    tokens = [block("table_open", "table", 1, 0), block("thead_open", "thead", 1, 1)]
    tokens += row(table.columns, "th") + [block("thead_close", "thead", -1, 1), block("tbody_open", "tbody", 1, 1)]
    for cells in table.rows:
        tokens += row(cells, "td")
    return tokens + [block("tbody_close", "tbody", -1, 1), block("table_close", "table", -1, 0)]


def _inline(cell: str | Cell, home: str, where: list[int] | None, level: int) -> Token:
    """One cell's words: its text, or its fact as a reference with the words around it."""
    if isinstance(cell, str):
        children = [Token("text", "", 0, content=cell)]
    else:
        ref = f"{home}.{cell.path}" if home else cell.path
        written = "{{ " + ref + " }}"
        children = ([Token("text", "", 0, content=cell.before)] if cell.before else []) + \
            [Token("calc_ref", "", 0, content=written, meta={"ref": ref})] + \
            ([Token("text", "", 0, content=cell.after)] if cell.after else [])
    content = "".join(c.content for c in children)
    return Token("inline", "", 0, map=where, level=level, block=True, content=content, children=children)
