"""`@worked ladder.per_token, ladder.per_user | note`: a "Worked" line from the results' own arithmetic."""
from calc.core.units import Result

from .base import BadArguments, Directive, add_directive, fact, paths


def check(args: str, namespace) -> list[Result]:
    if not paths(args):
        raise BadArguments("name at least one result, as in @worked ladder.per_token, ladder.per_user")
    return [fact(namespace, path, Result, "a derived result with arithmetic") for path in paths(args)]


def plugin(md) -> None:
    add_directive(md, Directive("worked", check, "components/worked.html.j2"))
