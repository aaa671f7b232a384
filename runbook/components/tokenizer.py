"""`@tokenizer`: Llama 3's tokenizer, live in the page, with what it shows before its script runs:
the default text encoded at build time by the same tokenizer."""
from typing import Any

from .. import tokens
from .base import Directive, add_directive, no_arguments


def check(args: str, namespace) -> dict[str, Any]:
    no_arguments(args)
    return tokens.tokenizer_view(tokens.DEFAULT_TEXT)


def plugin(md) -> None:
    add_directive(md, Directive("tokenizer", check, "components/tokenizer.html.j2", once_in_the_runbook=True))
