"""`@ladder`: the ten-rung ladder for the reference stack, as vLLM accounts it."""
from .base import Directive, add_directive, no_arguments


def check(args: str, namespace):
    no_arguments(args)
    return namespace["ladder"]


def plugin(md) -> None:
    add_directive(md, Directive("ladder", check, "components/ladder.html.j2"))
