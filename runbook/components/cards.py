"""`:::: cards 3` around `::: card Title | tag`s: a grid of cards, 1 to 4 columns."""
from html import escape

from .base import Container, add_container, eyebrow


def _card(title: str, tag: str, token, env) -> str:
    return f'<article class="card">{eyebrow(tag, "eyebrow")}' + (f"<h4>{title}</h4>" if title else "")


def plugin(md) -> None:
    add_container(md, Container("cards", lambda t, g, token, env: f'<div class="cards cols-{escape(token.meta["args"] or "3")}">',
                                "</div>"))
    add_container(md, Container("card", _card, "</article>"))
