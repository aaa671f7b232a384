"""`@calculator NAME`: a calculator declared in calc/calculators.py, its fields, status line and results."""
from typing import Any

from calc.calculators import CALCULATORS
from calc.fields import LARGEST_CONFIG

from .base import BadArguments, Directive, add_directive


def check(args: str, namespace) -> dict[str, Any]:
    if args not in CALCULATORS:
        raise BadArguments(f"no calculator named '{args}' (known: {', '.join(sorted(CALCULATORS))})")
    declared = CALCULATORS[args]
    return {"name": args, "label": declared.label, "fields": declared.fields, "defaults": declared.defaults,
            "takes_config": declared.takes_config, "results": declared.results, "longest_config": LARGEST_CONFIG,
            "ladder": namespace["ladder"], "inputs": declared.summary(declared.defaults, declared.stack(declared.defaults)[0])}


def plugin(md) -> None:
    add_directive(md, Directive("calculator", check, "components/calculator.html.j2", once_in_the_runbook=True))
