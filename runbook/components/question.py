"""`::: question Role | The question?`: an interview question card, its spine as a list."""
from .base import Container, add_container


def plugin(md) -> None:
    add_container(md, Container("question", lambda t, g, token, env:
                                f'<article class="card question"><p class="eyebrow role">{t}</p><h4>{g}</h4>', "</article>"))
