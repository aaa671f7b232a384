"""`::: ask-them`: questions to ask the interviewer."""
from .base import Container, add_container


def plugin(md) -> None:
    add_container(md, Container("ask-them", lambda t, g, token, env: '<div class="ask-them">', "</div>"))
