"""`::: quick` … `:::` and `::: deep` … `:::`: what belongs to one form only, the revision sheet or
the full chapter."""
from .base import Container, add_container


def plugin(md) -> None:
    for name in ("quick", "deep"):
        add_container(md, Container(name, lambda t, g, token, env, name=name:
                                    f'<div class="form form-{name}" data-form="{name}">', "</div>", form=True))
