"""`@chart NAME | caption`: a Plotly chart, its data from calc and its styling in runbook/charts.py."""
from .. import charts
from .base import BadArguments, Directive, add_directive


def check(args: str, namespace) -> dict:
    if args not in charts.CHARTS:
        raise BadArguments(f"no chart named '{args}' (known: {', '.join(sorted(charts.CHARTS))})")
    return charts.build(args, namespace)


def plugin(md) -> None:
    add_directive(md, Directive("chart", check, "components/chart.html.j2", once_in_the_runbook=True))
