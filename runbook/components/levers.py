"""`@levers | caption`: the stacked levers as bars, MHA → GQA → fp8 → paging."""
from .base import Directive, add_directive, no_arguments


def check(args: str, namespace):
    no_arguments(args)
    return namespace["levers"]


def plugin(md) -> None:
    add_directive(md, Directive("levers", check, "components/levers.html.j2"))
