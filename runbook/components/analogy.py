"""`::: analogy Title`: the analogy."""
from .base import Container, add_container


def plugin(md) -> None:
    add_container(md, Container("analogy", lambda t, g, token, env:
                                f'<div class="analogy" role="note"><p class="eyebrow">The analogy</p><h4>{t}</h4>', "</div>"))
