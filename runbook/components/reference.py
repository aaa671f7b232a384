"""`{{ ladder.kv_budget }}`, `{{ path | number }}`, `| worked`, `| formula`, `| digits N`: a number
from calc in the prose. Parsed into a `calc_ref` token; the compute stage resolves it into the
page's `references`; drawn as a span carrying its reference (for calculators to update) and its
arithmetic on hover."""
from __future__ import annotations

import re
from html import escape
from typing import Any, Mapping, Sequence

from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from calc.core.present import BadFilter, UnknownFact, figure

from ..errors import ContentError
from ..pages import Page
from .base import compute_section, looked_up, unknown

REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*(?:\|\s*([a-z]+)(?:\s+(\d+))?\s*)?\}\}")


def calc_reference(state: StateInline, silent: bool) -> bool:
    """`{{ path | filter digits }}` becomes a calc_ref token; a malformed one is kept for the error."""
    if not state.src.startswith("{{", state.pos):
        return False
    match = REFERENCE.match(state.src, state.pos)
    end = match.end() if match else state.src.find("}}", state.pos) + 2
    if end < 2:
        end = state.posMax
    if not silent:
        token = state.push("calc_ref", "", 0)
        token.content = state.src[state.pos:end]
        if match:
            spec = " ".join(part for part in match.group(2, 3) if part)
            token.meta = {"ref": match.group(1) + (f"|{spec}" if spec else "")}
        else:
            token.meta = {"malformed": True}
    state.pos = end
    return True


def shown(namespace: Mapping[str, Any], ref: str) -> tuple[str, str]:
    """A reference's text and arithmetic (calc.core.present.figure), its fact computed first so that
    a fault in calc surfaces as itself."""
    looked_up(namespace, ref.partition("|")[0].strip())
    return figure(namespace, ref)


def resolve_reference(page: Page, token: Token, line: int, namespace: Mapping[str, Any]) -> tuple[str, str]:
    """The reference's text and arithmetic, kept in the page's `references`; a reference content got
    wrong is a ContentError at its line."""
    if id(token) in page.references:
        return page.references[id(token)]
    if token.meta.get("malformed"):
        raise ContentError(page.path, line, f"malformed reference {token.content!r}: "
                                            "write {{ name.path }} or {{ name.path | number }}")
    ref = token.meta["ref"]
    compute_section(namespace, ref.partition("|")[0].strip())  # outside the try: calc's faults are calc's
    try:
        page.references[id(token)] = shown(namespace, ref)
    except UnknownFact as err:
        raise ContentError(page.path, line, unknown(err)) from None
    except BadFilter as err:
        raise ContentError(page.path, line, f"{err} in {token.content}") from None
    except TypeError as err:  # calc.core.present.show: a flag, an object, a filter its value cannot take
        raise ContentError(page.path, line, f"'{ref}' {err}") from None
    return page.references[id(token)]


def reference_html(ref: str, text: str, title: str) -> str:
    title_attr = f' title="{escape(title)}"' if title else ""
    return f'<span class="ref" data-ref="{escape(ref)}"{title_attr}>{escape(text)}</span>'


def render_reference(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    return reference_html(token.meta["ref"], *env["page"].references[id(token)])


def plugin(md) -> None:
    md.inline.ruler.before("emphasis", "calc_reference", calc_reference)
    md.add_render_rule("calc_ref", render_reference)
