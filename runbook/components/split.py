"""`@split read.busy | caption`: one decode step's read, cache against weights."""
from calc.model.roofline import DecodeRead

from .base import Directive, add_directive, fact


def plugin(md) -> None:
    add_directive(md, Directive("split", lambda args, namespace: fact(namespace, args, DecodeRead,
                                                                       "a decode read (such as read.busy)"),
                                "components/split.html.j2"))
