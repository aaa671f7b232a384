"""`::: callout Title | tag`: a highlighted box for the correction everyone needs."""
from .base import Container, add_container, eyebrow


def plugin(md) -> None:
    add_container(md, Container("callout", lambda t, g, token, env:
                                f'<div class="callout" role="note">{eyebrow(g, "eyebrow")}<h4>{t}</h4>', "</div>"))
