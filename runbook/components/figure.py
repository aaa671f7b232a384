"""`:::: figure PICTURE | Caption` around a numbered list: an animated figure, the list its steps.
The picture is a template in templates/components/figures/."""
from markdown_it.rules_core import StateCore
from markupsafe import Markup

from .base import Checking, Container, add_container, container_span, is_container


def figure_steps(state: StateCore) -> None:
    """A figure's steps are the items of the ordered list inside it."""
    tokens = state.tokens
    for i, token in enumerate(tokens):
        if is_container(token, "figure"):
            token.meta["steps"] = sum(1 for inner in tokens[container_span(tokens, i)]
                                      if inner.type == "list_item_open" and inner.level == token.level + 2)


def _picture(token) -> str:
    return token.meta["args"].partition("|")[0].strip()


def check(checking: Checking) -> None:
    pictures = {p.stem.removesuffix(".html") for p in (checking.templates / "components" / "figures").glob("*.html.j2")}
    if _picture(checking.token) not in pictures:
        raise checking.fault(f"no figure picture named '{_picture(checking.token)}' "
                             f"(known: {', '.join(sorted(pictures)) or 'none'})")
    if not checking.token.meta.get("steps"):
        raise checking.fault("a figure needs its steps as a numbered list inside it")


def _open(title: str, tag: str, token, env) -> str:
    return env["jinja"].get_template("components/figure.html.j2").render(
        picture=_picture(token), caption=Markup(tag), steps=token.meta["steps"])


def plugin(md) -> None:
    add_container(md, Container("figure", _open, "</figure>", check=check))
    md.core.ruler.push("figure_steps", figure_steps)
