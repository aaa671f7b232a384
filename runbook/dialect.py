"""The runbook's Markdown dialect: CommonMark plus a few small, named markdown-it rules.

- `{{ ladder.kv_budget }}`          a number from calc (filters: number, worked, formula, digits N)
- `::: card Title | tag` … `:::`    a component that wraps Markdown (containers nest with more colons)
- `@ladder`                         a component drawn entirely from calc, on a line of its own
- `## Heading | subtitle`           a section heading with its grey subtitle
- `→ text` as a component's last paragraph: its landing line
"""
from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

REFERENCE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*(?:\|\s*([a-z]+)(?:\s+(\d+))?\s*)?\}\}")
DIRECTIVE = re.compile(r"@([a-z][a-z-]*)(?:[ \t]+(.*?))?[ \t]*$")
LANDING = "→ "



def make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.inline.ruler.before("emphasis", "calc_reference", calc_reference)
    md.block.ruler.before("paragraph", "directive", directive)
    container_plugin(md, "component", validate=lambda params, *args: bool(params.strip()))
    md.core.ruler.push("component_titles", component_titles)
    md.core.ruler.push("heading_subtitles", heading_subtitles)
    md.core.ruler.push("subsection_ids", subsection_ids)
    md.core.ruler.push("correction_ids", correction_ids)
    md.core.ruler.push("landing_lines", landing_lines)
    md.core.ruler.push("fast_answer_pairs", fast_answer_pairs)
    return md


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


def directive(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A line `@name args` on its own: a component computed wholly from calc."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    line = state.src[state.bMarks[start] + state.tShift[start]:state.eMarks[start]]
    match = DIRECTIVE.match(line)
    if not match:
        return False
    if silent:
        return True
    token = state.push("directive", "", 0)
    token.map = [start, start + 1]
    token.info = match.group(1)
    token.content = match.group(2) or ""
    token.meta = {"title_tokens": _inline_tokens(state.md, token.content.partition("|")[2].strip())}
    state.line = start + 1
    return True


def component_titles(state: StateCore) -> None:
    """Split `::: card Title | tag` into a name, and a title and tag parsed as inline Markdown."""
    for token in state.tokens:
        if token.type != "container_component_open":
            continue
        name, _, rest = token.info.strip().partition(" ")
        title, _, tag = rest.partition("|")
        token.meta = {
            "name": name,
            "title_tokens": _inline_tokens(state.md, title.strip()),
            "tag_tokens": _inline_tokens(state.md, tag.strip()),
            "args": rest.strip(),
        }


def heading_subtitles(state: StateCore) -> None:
    """`## The ladder | from one card to a user count`: the part after '|' is the subtitle."""
    tokens = state.tokens
    for i, token in enumerate(tokens):
        if token.type != "heading_open" or token.tag != "h2":
            continue
        inline = tokens[i + 1]
        for j, child in enumerate(inline.children or []):
            if child.type == "text" and " | " in child.content:
                head, _, tail = child.content.partition(" | ")
                child.content = head
                subtitle = _inline_tokens(state.md, tail + "".join(c.content for c in inline.children[j + 1:]))
                inline.children = inline.children[:j + 1]
                token.meta = {"subtitle_tokens": subtitle}
                break
        token.attrSet("id", slug(inline.content.partition(" | ")[0]))


def subsection_ids(state: StateCore) -> None:
    """Every ### heading gets an id too (a fast answer can be linked to), unique on the page."""
    tokens = state.tokens
    used = {t.attrGet("id") for t in tokens if t.type == "heading_open" and t.attrGet("id")}
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h3":
            base = slug(tokens[i + 1].content)
            name, n = base, 2
            while name in used:
                name, n = f"{base}-{n}", n + 1
            used.add(name)
            token.attrSet("id", name)


def correction_ids(state: StateCore) -> None:
    """Each correction gets an id from its claim (`was-…`), so the register can link to it."""
    tokens = state.tokens
    used = {t.attrGet("id") for t in tokens if t.attrGet("id")}
    for token in tokens:
        if token.type == "container_component_open" and token.meta.get("name") == "correction":
            base = "was-" + "-".join(slug(token.meta["args"]).split("-")[:8])
            name, n = base, 2
            while name in used:
                name, n = f"{base}-{n}", n + 1
            used.add(name)
            token.attrSet("id", name)


def landing_lines(state: StateCore) -> None:
    """A paragraph that starts with '→ ' inside a component is its landing line."""
    tokens = state.tokens
    for i, token in enumerate(tokens):
        if token.type != "paragraph_open" or token.level == 0:
            continue
        children = tokens[i + 1].children or []
        if children and children[0].type == "text" and children[0].content.startswith(LANDING):
            children[0].content = children[0].content[len(LANDING):]
            token.attrSet("class", "landing")


def fast_answer_pairs(state: StateCore) -> None:
    """Inside `fast-answers`, each ### question and the answer under it become one pair."""
    out: list[Token] = []
    depth = 0
    for token in state.tokens:
        if token.type == "container_component_open" and token.info.strip().startswith("fast-answers"):
            depth = token.level + 1
        elif depth and token.level < depth:
            if token.type == "container_component_close" and out[-1].type != "container_component_open":
                out.append(Token("fast_answer_close", "div", -1))
            depth = 0 if token.type == "container_component_close" else depth
        elif depth and token.type == "heading_open" and token.level == depth:
            if out[-1].type != "container_component_open":
                out.append(Token("fast_answer_close", "div", -1))
            opener = Token("fast_answer_open", "div", 1)
            opener.attrSet("class", "fast-answer")
            out.append(opener)
        out.append(token)
    state.tokens = out


def slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", re.sub(r"\{\{.*?\}\}", "", text.lower()))
    return "-".join(words) or "section"


def _inline_tokens(md: MarkdownIt, text: str) -> list[Token]:
    if not text:
        return []
    tokens = md.parseInline(text)
    return tokens[0].children or []
