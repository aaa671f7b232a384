"""`:::: versus Caption` around two `::: side Title`s: side by side."""
from .base import Container, add_container, eyebrow


def plugin(md) -> None:
    add_container(md, Container("versus", lambda t, g, token, env:
                                f'<div class="versus">{eyebrow(t, "versus-caption")}<div class="versus-sides">',
                                "</div></div>"))
    add_container(md, Container("side", lambda t, g, token, env:
                                f'<section class="side">{eyebrow(g, "eyebrow")}<h4>{t}</h4>', "</section>"))
