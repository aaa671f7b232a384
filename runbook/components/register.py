"""`@register`: the corrections register (document 00). The build gathers every other document's
`::: correction` blocks into it (runbook/register.py); each is drawn as its own document draws it,
linked back to its section."""
from typing import Any

from markupsafe import Markup

from ..links import landing, placed_section
from .base import Directive, add_directive, no_arguments


def check(args: str, namespace) -> list:
    no_arguments(args)
    return []  # filled by the build's gather_register stage


def draw(gathered: list, renderer, options, env) -> list[dict[str, Any]]:
    return [_registered(correction, renderer, options, env) for correction in gathered]


def _registered(correction, renderer, options, env) -> dict[str, Any]:
    return {"entry": correction.entry, "href": placed_section(correction.entry, correction.section),
            "html": Markup(renderer.render(correction.tokens, options, landing(env, correction.page)))}


def plugin(md) -> None:
    add_directive(md, Directive("register", check, "components/register.html.j2", draw=draw))
