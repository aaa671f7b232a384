"""The runbook's Markdown dialect: CommonMark plus a few small, named markdown-it rules, and the
components, each a plugin of its own (runbook/components/).

- `{{ ladder.kv_budget }}`          a number from calc (filters: number, worked, formula, digits N)
- `::: card Title | tag` … `:::`    a component that wraps Markdown (containers nest with more colons)
- `@ladder`                         a component drawn entirely from calc, on a line of its own
- `## Heading | subtitle`           a section heading with its grey subtitle
- `→ text` as a component's last paragraph: its landing line
"""
from __future__ import annotations

import re
from typing import Sequence

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin

from .components import PLUGINS
from .components.base import OPEN, inline_tokens, note_heading, slug, unique
from .links import alternatives, edition_anchor, placed_href

DIRECTIVE = re.compile(r"@([a-z][a-z-]*)(?:[ \t]+(.*?))?[ \t]*$")
LANDING = "→ "


def make_markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.block.ruler.before("paragraph", "directive", directive)
    container_plugin(md, "component", validate=lambda params, *args: bool(params.strip()))
    md.core.ruler.push("component_titles", component_titles)
    md.core.ruler.push("heading_subtitles", heading_subtitles)
    md.core.ruler.push("subsection_ids", subsection_ids)
    md.core.ruler.push("landing_lines", landing_lines)
    md.add_render_rule("heading_open", render_heading_open)
    md.add_render_rule("heading_close", render_heading_close)
    md.add_render_rule("link_open", render_link_open)
    for plugin in PLUGINS:
        md.use(plugin)
    return md


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
    token.meta = {"title_tokens": inline_tokens(state.md, token.content.partition("|")[2].strip())}
    state.line = start + 1
    return True


def component_titles(state: StateCore) -> None:
    """Split `::: card Title | tag` into a name, and a title and tag parsed as inline Markdown."""
    for token in state.tokens:
        if token.type != OPEN:
            continue
        name, _, rest = token.info.strip().partition(" ")
        title, _, tag = rest.partition("|")
        token.meta = {
            "name": name,
            "title_tokens": inline_tokens(state.md, title.strip()),
            "tag_tokens": inline_tokens(state.md, tag.strip()),
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
                subtitle = inline_tokens(state.md, tail + "".join(c.content for c in inline.children[j + 1:]))
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
            token.attrSet("id", unique(slug(tokens[i + 1].content), used))


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


def render_heading_open(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    """A section's id, in its page and in the edition (runbook/links.py). The edition's is rendered
    out of the token stream, as it always has been, which puts a line break after the tag."""
    token = tokens[idx]
    note_heading(env, int(token.tag[1]))
    anchor = token.attrGet("id")
    if not anchor:
        return self.renderToken(tokens, idx, options, env)
    in_edition = token.copy(attrs={**token.attrs, "id": edition_anchor(env["page"].entry.number, str(anchor))})
    return alternatives(self.renderToken(tokens, idx, options, env), self.renderToken([in_edition], 0, options, env))


def render_heading_close(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    opener = tokens[idx - 2]
    subtitle = opener.meta.get("subtitle_tokens") if isinstance(opener.meta, dict) else None
    extra = f' <span class="subtitle">{self.renderInline(subtitle, options, env)}</span>' if subtitle else ""
    return f"{extra}</{tokens[idx].tag}>\n"


def render_link_open(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    """A link as the link stage checked it, in its page and in the edition (runbook/links.py)."""
    token = tokens[idx]
    href = env["page"].hrefs.get(id(token), token.attrGet("href"))
    placed = token.copy(attrs={**token.attrs, "href": placed_href(env, str(href))})
    return self.renderToken([placed], 0, options, env)
