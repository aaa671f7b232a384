"""`::: spoken Title`: the answer said out loud."""
from .base import Container, add_container, eyebrow


def plugin(md) -> None:
    add_container(md, Container("spoken", lambda t, g, token, env: f'<blockquote class="spoken">{eyebrow(t, "eyebrow")}',
                                "</blockquote>"))
