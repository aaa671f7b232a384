"""What the components share: how each registers itself on the parser, the two render rules that
draw every `@directive` and every `::: container` by its registration, and small helpers over
tokens. A component is a module with `def plugin(md)` (runbook/components/__init__.py lists them)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from calc.core.present import UnknownFact, resolve

from ..errors import ContentError
from ..pages import Page
from ..links import placed_anchor

OPEN, CLOSE = "container_component_open", "container_component_close"


class BadArguments(ValueError):
    """A component's arguments are wrong (an unknown name, arguments where it takes none): its check
    raises this, and the build reports it at the component's line, as a fault in content."""


@dataclass(frozen=True)
class Checking:
    """What a container's check may consult: the page, the index of its opening token, calc's facts,
    and the templates folder."""
    page: Page
    index: int
    namespace: Mapping[str, Any]
    templates: Path

    @property
    def token(self) -> Token:
        return self.page.tokens[self.index]

    @property
    def line(self) -> int:
        return self.page.line(self.token.map[0])

    def fault(self, message: str) -> ContentError:
        return ContentError(self.page.path, self.line, message)


@dataclass(frozen=True)
class Directive:
    """`@name args | caption` on a line of its own, drawn wholly from calc by its template.
    `check` turns the arguments into what the template draws (`value`), raising BadArguments for
    arguments an author got wrong; `draw`, if given, makes the template's value at render time."""
    name: str
    check: Callable[[str, Mapping[str, Any]], Any]
    template: str
    draw: Callable[[Any, Any, Any, dict], Any] | None = None
    once_in_the_runbook: bool = False  # the edition holds every document in one file, where a second copy would clash


@dataclass(frozen=True)
class Container:
    """`::: name Title | tag` … `:::`, wrapping Markdown. `open` makes the opening HTML from the
    title's and tag's HTML, the token and the render env; `close` is the closing HTML."""
    name: str
    open: Callable[[str, str, Token, dict], str]
    close: str
    check: Callable[[Checking], None] | None = None
    form: bool = False  # quick and deep: only one shows at a time, which sets the heading levels after it


@dataclass
class Registry:
    directives: dict[str, Directive] = field(default_factory=dict)
    containers: dict[str, Container] = field(default_factory=dict)


def registry(md: MarkdownIt) -> Registry:
    """The components registered on this parser, kept in its options (which every render rule is given)."""
    if "components" not in md.options:
        md.options["components"] = Registry()
    return md.options["components"]


def add_directive(md: MarkdownIt, directive: Directive) -> None:
    registry(md).directives[directive.name] = directive
    md.add_render_rule("directive", render_directive)


def add_container(md: MarkdownIt, container: Container) -> None:
    registry(md).containers[container.name] = container
    md.add_render_rule(OPEN, render_container)
    md.add_render_rule(CLOSE, render_container)


def arguments(token: Token) -> str:
    """A directive's arguments: what follows its name, up to the caption."""
    return token.content.partition("|")[0].strip()


def paths(args: str) -> list[str]:
    return [p.strip() for p in args.split(",") if p.strip()]


def no_arguments(args: str) -> None:
    if args:
        raise BadArguments(f"takes no arguments, got '{args}'")


def looked_up(namespace: Mapping[str, Any], path: str) -> Any:
    """The fact a dotted name names. Its section is computed first, outside the lookup, so that a
    fault in calc while computing it (even a KeyError) surfaces as itself, never as an unknown name."""
    compute_section(namespace, path)
    return resolve(namespace, path)


def compute_section(namespace: Mapping[str, Any], path: str) -> None:
    """The section a dotted name starts with, computed (a fault in it is calc's, whatever it raises)."""
    section = path.split(".", 1)[0]
    if section in set(namespace):
        namespace[section]


def fact(namespace: Mapping[str, Any], path: str, kind: type, what: str) -> Any:
    """The fact a component's arguments name, which must be of the kind it draws."""
    try:
        value = looked_up(namespace, path.strip())
    except UnknownFact as err:
        raise BadArguments(unknown(err)) from None
    if not isinstance(value, kind):
        raise BadArguments(f"'{path.strip()}' is not {what}")
    return value


def unknown(err: UnknownFact) -> str:
    head = err.path.rsplit(".", 1)[0]
    close = [k for k in err.known if k.startswith(head)] or err.known
    return f"unknown calc reference '{err.path}'" + (f"; known here: {', '.join(close[:12])}" if close else "")


def container_span(tokens: Sequence[Token], start: int) -> slice:
    """The tokens from a container's opening to its matching close, both included."""
    depth = 0
    for end in range(start, len(tokens)):
        depth += {OPEN: 1, CLOSE: -1}.get(tokens[end].type, 0)
        if depth == 0:
            return slice(start, end + 1)
    return slice(start, len(tokens))


def is_container(token: Token, name: str) -> bool:
    return token.type == OPEN and token.meta["name"] == name


def slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", re.sub(r"\{\{.*?\}\}", "", text.lower()))
    return "-".join(words) or "section"


def unique(base: str, used: set[str]) -> str:
    """`base`, or `base-2`, `base-3`… whichever is free on the page; marked used."""
    name, n = base, 2
    while name in used:
        name, n = f"{base}-{n}", n + 1
    used.add(name)
    return name


def inline_tokens(md: MarkdownIt, text: str) -> list[Token]:
    if not text:
        return []
    tokens = md.parseInline(text)
    return tokens[0].children or []


def render_directive(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    directive = options["components"].directives[token.info]
    caption = Markup(self.renderInline(token.meta["title_tokens"], options, env))
    args = arguments(token)
    value = env["page"].values[id(token)]
    if directive.draw is not None:
        value = directive.draw(value, self, options, env)
    template = env["jinja"].get_template(directive.template)
    return template.render(value=value, caption=caption, path=args, paths=paths(args)) + "\n"


def render_container(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    stack = env.setdefault("open_components", [])
    if token.nesting == -1:
        container = stack.pop()
        if container.form:
            _leave_form(env)
        return container.close + "\n"
    container = options["components"].containers[token.meta["name"]]
    stack.append(container)
    if container.form:
        _enter_form(env)
    title = self.renderInline(token.meta["title_tokens"], options, env)
    tag = self.renderInline(token.meta["tag_tokens"], options, env)
    html = _title_level(container.open(title, tag, token, env), env)
    anchor = token.attrGet("id")
    if anchor and "source" not in env:  # a correction copied into the register keeps no id: its link points home
        html = html.replace(">", f' id="{escape(placed_anchor(env, str(anchor)))}">', 1)
    return html + "\n"


# Heading levels never skip (axe's heading-order), whatever section a component sits in: a
# component's title, written <h4> by its `open`, takes the level just below the heading before
# it. Only one form shows at a time, so each form starts under the heading outside it, and what
# follows a form sits under the shallower of that heading and the form's last.
def _enter_form(env) -> None:
    env["form_depth"] = env.get("form_depth", 0) + 1
    env["heading_level"] = env.get("outer_level", 1)


def _leave_form(env) -> None:
    env["form_depth"] -= 1
    env["outer_level"] = env["heading_level"] = min(env.get("outer_level", 1), env["heading_level"])


def note_heading(env, level: int) -> None:
    env["heading_level"] = level
    if not env.get("form_depth"):
        env["outer_level"] = level


def _title_level(html: str, env) -> str:
    tag = f"h{min(env.get('heading_level', 1) + 1, 6)}"
    return html.replace("<h4>", f'<{tag} class="component-title">').replace("</h4>", f"</{tag}>")


def eyebrow(tag_html: str, css: str) -> str:
    """The small line above a component's title, if it has one."""
    return f'<p class="{css}">{tag_html}</p>' if tag_html else ""
