"""`@formula kv.formula | caption`: a formula from calc, large."""
from .base import Directive, add_directive, fact


def plugin(md) -> None:
    add_directive(md, Directive("formula", lambda args, namespace: fact(namespace, args, str, "a formula"),
                                "components/formula.html.j2"))
