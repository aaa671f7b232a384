"""How each component of the dialect is checked (compute stage) and drawn (render stage)."""
from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from calc.calculators import CALCULATORS
from calc.fields import LARGEST_CONFIG
from calc.core.present import resolve
from calc.model.roofline import DecodeRead
from calc.core.units import Result

from . import charts, links, tables, tokens


def _paths(args: str) -> list[str]:
    return [p.strip() for p in args.split(",") if p.strip()]


def _one(args: str, namespace: Mapping[str, Any], kind: type, what: str) -> Any:
    value = resolve(namespace, args.strip())
    if not isinstance(value, kind):
        raise TypeError(f"'{args.strip()}' is not {what}")
    return value


def _worked(args: str, namespace: Mapping[str, Any]) -> list[Result]:
    paths = _paths(args)
    if not paths:
        raise ValueError("name at least one result, as in @worked ladder.per_token, ladder.per_user")
    return [_one(p, namespace, Result, "a derived result with arithmetic") for p in paths]


def _no_args_list(args: str, namespace: Mapping[str, Any]) -> list:
    """The corrections register: the build fills it from every document (runbook/register.py)."""
    if args:
        raise ValueError(f"takes no arguments, got '{args}'")
    return []


def _no_args(key: str) -> Callable[[str, Mapping[str, Any]], Any]:
    def check(args: str, namespace: Mapping[str, Any]) -> Any:
        if args:
            raise ValueError(f"takes no arguments, got '{args}'")
        return namespace[key]
    return check


CHECKS: dict[str, Callable[[str, Mapping[str, Any]], Any]] = {
    "formula": lambda args, ns: _one(args, ns, str, "a formula"),
    "worked": _worked,
    "ladder": _no_args("ladder"),
    "levers": _no_args("levers"),
    "split": lambda args, ns: _one(args, ns, DecodeRead, "a decode read (such as read.busy)"),
    "chart": charts.build,
    "table": tables.check,
    "calculator": lambda args, ns: _calculator(args, ns),
    "tokenizer": lambda args, ns: _tokenizer(args),
    "note": lambda args, ns: _note(args),
    "register": _no_args_list,
}

NOTES = Path(__file__).resolve().parent.parent / "templates" / "components" / "notes"


def _note(args: str) -> dict[str, str]:
    """A printable note: its body is a template in templates/components/notes/, drawn from references."""
    name = args.strip()
    known = sorted(p.name.removesuffix(".html.j2") for p in NOTES.glob("*.html.j2"))
    if name not in known:
        raise ValueError(f"no note named '{name}' (known: {', '.join(known) or 'none'})")
    return {"name": name}


def _tokenizer(args: str) -> dict[str, Any]:
    """The page's tokenizer, with what it shows before its script runs: the default text encoded
    at build time by the same tokenizer."""
    if args:
        raise ValueError(f"takes no arguments, got '{args}'")
    return tokens.tokenizer_view(tokens.DEFAULT_TEXT)


def _calculator(args: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    name = args.strip()
    if name not in CALCULATORS:
        raise ValueError(f"no calculator named '{name}' (known: {', '.join(sorted(CALCULATORS))})")
    declared = CALCULATORS[name]
    return {"name": name, "label": declared.label, "fields": declared.fields, "defaults": declared.defaults,
            "takes_config": declared.takes_config, "results": declared.results, "longest_config": LARGEST_CONFIG,
            "ladder": namespace["ladder"], "inputs": declared.summary(declared.defaults, declared.stack(declared.defaults)[0])}


def _attr_tag(tag_html: str, css: str) -> str:
    return f'<p class="{css}">{tag_html}</p>' if tag_html else ""


CONTAINER_HTML: dict[str, tuple[Callable[[str, str, Token], str], str]] = {
    "quick": (lambda t, g, tok: '<div class="form form-quick" data-form="quick">', "</div>"),
    "deep": (lambda t, g, tok: '<div class="form form-deep" data-form="deep">', "</div>"),
    "cards": (lambda t, g, tok: f'<div class="cards cols-{escape(tok.meta["args"] or "3")}">', "</div>"),
    "card": (lambda t, g, tok: f'<article class="card">{_attr_tag(g, "eyebrow")}<h4>{t}</h4>'
             if t else f'<article class="card">{_attr_tag(g, "eyebrow")}', "</article>"),
    "question": (lambda t, g, tok: f'<article class="card question"><p class="eyebrow role">{t}</p><h4>{g}</h4>',
                 "</article>"),
    "callout": (lambda t, g, tok: f'<div class="callout" role="note">{_attr_tag(g, "eyebrow")}<h4>{t}</h4>', "</div>"),
    "analogy": (lambda t, g, tok: f'<div class="analogy" role="note"><p class="eyebrow">The analogy</p><h4>{t}</h4>',
                "</div>"),
    "versus": (lambda t, g, tok: f'<div class="versus">{_attr_tag(t, "versus-caption")}<div class="versus-sides">',
               "</div></div>"),
    "side": (lambda t, g, tok: f'<section class="side">{_attr_tag(g, "eyebrow")}<h4>{t}</h4>', "</section>"),
    "spoken": (lambda t, g, tok: f'<blockquote class="spoken">{_attr_tag(t, "eyebrow")}', "</blockquote>"),
    "fast-answers": (lambda t, g, tok: '<div class="fast-answers">', "</div>"),
    "ask-them": (lambda t, g, tok: '<div class="ask-them">', "</div>"),
    "corrections": (lambda t, g, tok: '<div class="corrections">', "</div>"),
    "live": (lambda t, g, tok: f'<div class="live" data-live="{escape(tok.meta["args"].strip())}">', "</div>"),
    "correction": (lambda t, g, tok: f'<article class="card correction"><p class="eyebrow">Was</p><h4>{t}</h4>',
                   "</article>"),
}


CONTAINERS = set(CONTAINER_HTML) | {"figure"}
DIRECTIVES = set(CHECKS)


def install(md: MarkdownIt) -> None:
    """Register the render rules; they read the Jinja environment and page from `env`."""
    md.add_render_rule("calc_ref", render_reference)
    md.add_render_rule("directive", render_directive)
    md.add_render_rule("container_component_open", render_container)
    md.add_render_rule("container_component_close", render_container)
    md.add_render_rule("heading_close", render_heading_close)
    md.add_render_rule("heading_open", render_heading_open)
    md.add_render_rule("link_open", render_link_open)


def reference_html(ref: str, text: str, title: str) -> str:
    """A number on the page: its reference (for calculators to update) and its arithmetic on hover."""
    title_attr = f' title="{escape(title)}"' if title else ""
    return f'<span class="ref" data-ref="{escape(ref)}"{title_attr}>{escape(text)}</span>'


def render_reference(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    meta = tokens[idx].meta
    return reference_html(meta["ref"], meta["text"], meta["title"])


def render_directive(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    caption = Markup(self.renderInline(token.meta["title_tokens"], options, env))
    template = env["jinja"].get_template(f"components/{token.info}.html.j2")
    args = token.content.partition("|")[0].strip()
    value = token.meta.get("values")
    if token.info == "register":
        value = [_registered(self, correction, options, env) for correction in value]
    return template.render(value=value, caption=caption, path=args, paths=_paths(args)) + "\n"


def _registered(renderer, correction, options, env) -> dict[str, Any]:
    """One gathered correction, drawn as its own document draws it, linked back to its section."""
    number = correction.entry.number
    landing = {**env, "source": number}
    if "edition" in env:
        landing["edition"] = number
        href = "#" + links.edition_anchor(number, correction.section)
    else:
        href = f"{correction.entry.output_name}#{correction.section}"
    return {"entry": correction.entry, "href": href, "html": Markup(renderer.render(correction.tokens, options, landing))}


def render_container(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    token = tokens[idx]
    stack = env.setdefault("open_components", [])
    if token.nesting == -1:
        closer = stack.pop()
        if isinstance(closer, _FormCloser):
            _leave_form(env)
        return closer + "\n"
    name = token.meta["name"]
    title = self.renderInline(token.meta["title_tokens"], options, env)
    tag = self.renderInline(token.meta["tag_tokens"], options, env)
    if name == "figure":
        stack.append("</figure>")
        return env["jinja"].get_template("components/figure.html.j2").render(
            picture=token.meta["args"].partition("|")[0].strip(), caption=Markup(tag), steps=token.meta["steps"]) + "\n"
    opener, closer = CONTAINER_HTML[name]
    if name in ("quick", "deep"):
        stack.append(FORM_CLOSER)
        _enter_form(env)
    else:
        stack.append(closer)
    html = _title_level(opener(title, tag, token), env)
    anchor = token.attrGet("id")
    if anchor and "source" not in env:  # a correction copied into the register keeps no id: its link points home
        anchor = links.edition_anchor(env["edition"], str(anchor)) if "edition" in env else str(anchor)
        html = html.replace(">", f' id="{escape(anchor)}">', 1)
    return html + "\n"


# Heading levels never skip (axe's heading-order), whatever section a component sits in: a
# component's title, written <h4> in CONTAINER_HTML, takes the level just below the heading before
# it. Only one form shows at a time, so each form starts under the heading outside it, and what
# follows a form sits under the shallower of that heading and the form's last.
class _FormCloser(str):
    """A form's closing tag, told apart on the stack of open components."""


FORM_CLOSER = _FormCloser("</div>")


def _enter_form(env) -> None:
    env["form_depth"] = env.get("form_depth", 0) + 1
    env["heading_level"] = env.get("outer_level", 1)


def _leave_form(env) -> None:
    env["form_depth"] -= 1
    env["outer_level"] = env["heading_level"] = min(env.get("outer_level", 1), env["heading_level"])


def _note_heading(env, level: int) -> None:
    env["heading_level"] = level
    if not env.get("form_depth"):
        env["outer_level"] = level


def _title_level(html: str, env) -> str:
    tag = f"h{min(env.get('heading_level', 1) + 1, 6)}"
    return html.replace("<h4>", f'<{tag} class="component-title">').replace("</h4>", f"</{tag}>")


def render_heading_open(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    """In the edition a section's id carries its document's number, so ids stay unique in one file."""
    token = tokens[idx]
    _note_heading(env, int(token.tag[1]))
    if "edition" not in env or not token.attrGet("id"):
        return self.renderToken(tokens, idx, options, env)
    copy = token.copy(attrs={**token.attrs, "id": links.edition_anchor(env["edition"], str(token.attrGet("id")))})
    return self.renderToken([copy], 0, options, env)


def render_link_open(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    """Links as checked (runbook/links.py), placed where the HTML lands: in the edition every
    document is a section of one file; a correction drawn in the register keeps pointing at its
    own document."""
    token = tokens[idx]
    href = str(token.attrGet("href"))
    if "edition" in env:
        href = links.edition_href(href, env["edition"], env["catalogue"])
    elif "source" in env and href.startswith("#"):
        href = env["catalogue"].entry(env["source"]).output_name + href
    else:
        return self.renderToken(tokens, idx, options, env)
    copy = token.copy(attrs={**token.attrs, "href": href})  # a copy of its own: the token is drawn again elsewhere
    return self.renderToken([copy], 0, options, env)


def render_heading_close(self, tokens: Sequence[Token], idx: int, options, env) -> str:
    opener = tokens[idx - 2]
    subtitle = opener.meta.get("subtitle_tokens") if isinstance(opener.meta, dict) else None
    extra = f' <span class="subtitle">{self.renderInline(subtitle, options, env)}</span>' if subtitle else ""
    return f"{extra}</{tokens[idx].tag}>\n"


def count_figure_steps(tokens: list[Token]) -> None:
    """A figure's steps are the items of the ordered list inside it."""
    for i, token in enumerate(tokens):
        if token.type == "container_component_open" and token.meta["name"] == "figure":
            depth, steps = 0, 0
            for inner in tokens[i + 1:]:
                if inner.type == "container_component_open":
                    depth += 1
                elif inner.type == "container_component_close":
                    if depth == 0:
                        break
                    depth -= 1
                elif inner.type == "list_item_open" and inner.level == token.level + 2:
                    steps += 1
            token.meta["steps"] = steps
