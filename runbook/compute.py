"""The compute stage: every reference in a parsed page is looked up in calc, every component
checked, and every number typed into the prose compared against what calc derives."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from markdown_it.token import Token

from calc.calculator import Calculator
from calc.calculators import CALCULATORS
from calc.specs.cards import CARDS
from calc.specs.models import CATALOGUE
from calc.core.present import BadFilter, UnknownFact, figure
from calc.core.units import Result

from .components import CHECKS, CONTAINERS, DIRECTIVES
from .errors import ContentError
from .pages import Page

TYPED_NUMBER = re.compile(r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w]|[.,]\d)(\s?×)?")
STRAY_FENCE = re.compile(r":{3,}\s*(?:\n|$)")
NOT_QUANTITIES = re.compile(r"\b(?:docs?|documents?|track|step|steps|stages?|volume|vol)\.? \d+(?:\s*(?:,|and|·|–|-)\s*\d+)*", re.I)


@dataclass(frozen=True)
class DerivedNumber:
    path: str
    scaled: float


def compute(page: Page, namespace: Mapping[str, Any], pictures: set[str], derived: list[DerivedNumber]) -> None:
    """Resolve references and component arguments in place; raise ContentError on the first fault.
    `derived`: every number calc can print (derived_numbers), made once per build."""
    names = _name_pattern()
    for children, line in page.inline_runs():
        for token in children:
            if token.type in ("softbreak", "hardbreak"):
                line += 1
            elif token.type == "calc_ref":
                resolve_reference(page, token, line, namespace)
            elif token.type == "text":
                _reject_typed_numbers(page, token.content, line, derived, names)
    calculators = {t.content.partition("|")[0].strip() for t in page.tokens
                   if t.type == "directive" and t.info == "calculator"}
    for token in page.tokens:
        line = page.line(token.map[0]) if token.map else 1
        if token.type == "inline" and STRAY_FENCE.match(token.content):
            raise ContentError(page.path, line, f"'{token.content.split()[0]}' closes no component here: a component "
                                                "inside another needs fewer colons than the one around it")
        if token.type == "container_component_open":
            _check_closed(page, token, line)
        if token.type == "container_component_open" and token.meta["name"] == "live":
            following = token.meta["args"].strip()
            if following not in calculators:
                raise ContentError(page.path, line, f"'::: live {following}' follows a calculator this page does not "
                                                    f"have (on this page: {', '.join(sorted(calculators)) or 'none'})")
            _check_live_region(page, page.tokens.index(token), CALCULATORS[following])
        if token.type == "container_component_open" and token.meta["name"] not in CONTAINERS:
            raise ContentError(page.path, line, f"unknown component '::: {token.meta['name']}' "
                                                f"(known: {', '.join(sorted(CONTAINERS))})")
        if token.type == "container_component_open" and token.meta["name"] == "figure":
            _check_figure(page, token, line, pictures)
        if token.type == "directive":
            if token.info not in DIRECTIVES:
                raise ContentError(page.path, line, f"unknown component '@{token.info}' "
                                                    f"(known: {', '.join('@' + d for d in sorted(DIRECTIVES))})")
            try:
                token.meta["values"] = CHECKS[token.info](token.content.partition("|")[0].strip(), namespace)
            except (UnknownFact, ValueError, TypeError) as err:
                raise ContentError(page.path, line, f"@{token.info}: {_explain(err)}") from None


def _check_closed(page: Page, token: Token, line: int) -> None:
    """markdown-it closes a component left open at the end of the document (or of the component
    around it), silently swallowing everything after it; here that is a fault at its opening line."""
    lines = page.body.split("\n")
    end = token.map[1]
    closer = lines[end].strip() if end < len(lines) else ""
    if not (closer and set(closer) == {":"} and len(closer) >= len(token.markup)):
        name = token.meta["name"]
        raise ContentError(page.path, line, f"'{token.markup} {name}' is never closed: end it with a line "
                                            f"'{token.markup}' (as it stands it swallows everything after it)")


def _check_live_region(page: Page, start: int, calculator: Calculator) -> None:
    """What sits inside `::: live NAME` claims to follow NAME: a chart or bars it does not redraw
    would keep the reference stack's drawing under captions that follow the reader's inputs."""
    depth = 0
    for token in page.tokens[start + 1:]:
        if token.type == "container_component_open":
            depth += 1
        elif token.type == "container_component_close":
            if depth == 0:
                return
            depth -= 1
        elif token.type == "directive":
            line = page.line(token.map[0])
            args = token.content.partition("|")[0].strip()
            if token.info == "chart" and args not in calculator.curves:
                raise ContentError(page.path, line, f"@chart {args} sits in '::: live {calculator.name}', but that "
                                                    f"calculator does not redraw it (it redraws: "
                                                    f"{', '.join(sorted(calculator.curves)) or 'no charts'}); move "
                                                    "the chart out of the live region or declare its curves")
            if token.info == "levers" and calculator.bars is None:
                raise ContentError(page.path, line, f"@levers sits in '::: live {calculator.name}', but that "
                                                    "calculator declares no bars to redraw")


def _check_figure(page: Page, token: Token, line: int, pictures: set[str]) -> None:
    picture = token.meta["args"].partition("|")[0].strip()
    if picture not in pictures:
        raise ContentError(page.path, line, f"no figure picture named '{picture}' "
                                            f"(known: {', '.join(sorted(pictures)) or 'none'})")
    if not token.meta.get("steps"):
        raise ContentError(page.path, line, "a figure needs its steps as a numbered list inside it")


def reference_text(namespace: Mapping[str, Any]):
    """A reference's text as the page prints it, resolved now if its page was not computed (the
    search index reads every page's headings, even when the build writes one document)."""
    def text(page: Page, token: Token) -> str:
        if "text" not in token.meta:
            resolve_reference(page, token, page.line_of(token), namespace)
        return token.meta["text"]
    return text


def resolve_reference(page: Page, token: Token, line: int, namespace: Mapping[str, Any]) -> None:
    meta = token.meta
    if meta.get("malformed"):
        raise ContentError(page.path, line, f"malformed reference {token.content!r}: "
                                            "write {{ name.path }} or {{ name.path | number }}")
    try:
        meta["text"], meta["title"] = figure(namespace, meta["ref"])
    except UnknownFact as err:
        raise ContentError(page.path, line, f"unknown calc reference '{err.path}'{_suggest(err)}") from None
    except BadFilter as err:
        raise ContentError(page.path, line, f"{err} in {token.content}") from None
    except TypeError as err:
        raise ContentError(page.path, line, f"'{meta['ref']}' {err}") from None


def _suggest(err: UnknownFact) -> str:
    head = err.path.rsplit(".", 1)[0]
    close = [k for k in err.known if k.startswith(head)] or err.known
    return f"; known here: {', '.join(close[:12])}" if close else ""


def _explain(err: Exception) -> str:
    if isinstance(err, UnknownFact):
        return f"unknown calc reference '{err.path}'{_suggest(err)}"
    return str(err)


def derived_numbers(facts: Iterable[tuple[str, Any]]) -> list[DerivedNumber]:
    """Every number calc can print (the namespace's leaves), in the unit it is printed in."""
    found = []
    for path, value in facts:
        scaled = value.value / value.unit.scale if isinstance(value, Result) else float(value)
        found.append(DerivedNumber(path, scaled))
    return found


def _reject_typed_numbers(page: Page, text: str, line: int, derived: list[DerivedNumber],
                          names: re.Pattern) -> None:
    text = NOT_QUANTITIES.sub(" ", names.sub(" ", text))
    for match in TYPED_NUMBER.finditer(text):
        whole, fraction, times = match.group(1), match.group(2) or "", match.group(3)
        typed = float(whole.replace(",", "") + fraction)
        decimals = max(len(fraction) - 1, 0)
        if typed < 10 and not fraction and not times:
            continue
        for number in derived:
            if round(number.scaled, decimals) == typed:
                raise ContentError(
                    page.path, line,
                    f"'{match.group(0).strip()}' is typed by hand, but calc derives it as {number.path}: "
                    f"write {{{{ {number.path} }}}} so it follows the calculation")


def _name_pattern() -> re.Pattern:
    """Product names carry digits ('Llama 3.1 8B', 'H100 SXM 80 GB') that are not quantities."""
    names = {m.name for m in CATALOGUE.values()} | {c.name for c in CARDS.values()}
    families = {" ".join(n.split()[:2]) for n in names}
    alternatives = sorted(names | families, key=len, reverse=True)
    return re.compile("|".join(re.escape(n) for n in alternatives))
