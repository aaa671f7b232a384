"""`::: live NAME` … `:::`: a region whose references, charts and bars follow calculator NAME."""
from html import escape

from calc.calculators import CALCULATORS

from ..errors import ContentError
from .base import Checking, Container, add_container, arguments, container_span


def check(checking: Checking) -> None:
    """It follows a calculator on its page, and what sits inside claims to follow that calculator:
    a chart or bars it does not redraw would keep the reference stack's drawing under captions that
    follow the reader's inputs."""
    page, following = checking.page, checking.token.meta["args"].strip()
    calculators = {arguments(t) for t in page.tokens if t.type == "directive" and t.info == "calculator"}
    if following not in calculators:
        raise checking.fault(f"'::: live {following}' follows a calculator this page does not have (on this "
                             f"page: {', '.join(sorted(calculators)) or 'none'})")
    calculator = CALCULATORS[following]
    for token in page.tokens[container_span(page.tokens, checking.index)]:
        if token.type != "directive":
            continue
        line = page.line(token.map[0])
        if token.info == "chart" and arguments(token) not in calculator.curves:
            raise ContentError(page.path, line, f"@chart {arguments(token)} sits in '::: live {calculator.name}', but "
                                                f"that calculator does not redraw it (it redraws: "
                                                f"{', '.join(sorted(calculator.curves)) or 'no charts'}); move the "
                                                "chart out of the live region or declare its curves")
        if token.info == "levers" and calculator.bars is None:
            raise ContentError(page.path, line, f"@levers sits in '::: live {calculator.name}', but that calculator "
                                                "declares no bars to redraw")


def plugin(md) -> None:
    add_container(md, Container("live", lambda t, g, token, env:
                                f'<div class="live" data-live="{escape(token.meta["args"].strip())}">', "</div>",
                                check=check))
