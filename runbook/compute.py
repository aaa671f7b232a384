"""The compute stage: every reference in a parsed page is looked up in calc, every component
checked by its own check (runbook/components/), and every number typed into the prose compared
against what calc derives. What it finds goes into the page's `references` and `values`.

A fault in content is a ContentError at its line. Anything else a check raises is a fault in the
build or in calc: it goes on as itself, with a note saying which component on which line it was
checking."""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from markdown_it.token import Token

from calc.specs.cards import CARDS
from calc.specs.models import CATALOGUE
from calc.core.units import Result

from .components.base import OPEN, BadArguments, Checking, Registry, arguments
from .components.reference import resolve_reference
from .errors import ContentError
from .pages import Page

TYPED_NUMBER = re.compile(r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w]|[.,]\d)(\s?×)?")
STRAY_FENCE = re.compile(r":{3,}\s*(?:\n|$)")
NOT_QUANTITIES = re.compile(r"\b(?:docs?|documents?|track|step|steps|stages?|volume|vol)\.? \d+(?:\s*(?:,|and|·|–|-)\s*\d+)*", re.I)


@dataclass(frozen=True)
class DerivedNumber:
    path: str
    scaled: float


def resolve_references(page: Page, namespace: Mapping[str, Any]) -> None:
    for children, line in page.inline_runs():
        for token in children:
            if token.type in ("softbreak", "hardbreak"):
                line += 1
            elif token.type == "calc_ref":
                resolve_reference(page, token, line, namespace)


def check_components(page: Page, registry: Registry, namespace: Mapping[str, Any], templates: Path) -> None:
    """Check every component on the page; what a directive's check derives goes into `page.values`."""
    for i, token in enumerate(page.tokens):
        line = page.line(token.map[0]) if token.map else 1
        if token.type == "inline" and STRAY_FENCE.match(token.content):
            raise ContentError(page.path, line, f"'{token.content.split()[0]}' closes no component here: a component "
                                                "inside another needs fewer colons than the one around it")
        if token.type == OPEN:
            _check_closed(page, token, line)
            container = registry.containers.get(token.meta["name"])
            if container is None:
                raise ContentError(page.path, line, f"unknown component '::: {token.meta['name']}' "
                                                    f"(known: {', '.join(sorted(registry.containers))})")
            if container.check is not None:
                with _checking(page, line, f"'::: {container.name}'"):
                    container.check(Checking(page, i, namespace, templates))
        if token.type == "directive":
            directive = registry.directives.get(token.info)
            if directive is None:
                raise ContentError(page.path, line, f"unknown component '@{token.info}' "
                                                    f"(known: {', '.join('@' + d for d in sorted(registry.directives))})")
            with _checking(page, line, f"@{token.info}"):
                try:
                    page.values[id(token)] = directive.check(arguments(token), namespace)
                except BadArguments as err:
                    raise ContentError(page.path, line, f"@{token.info}: {err}") from None


@contextmanager
def _checking(page: Page, line: int, component: str) -> Iterator[None]:
    """A fault that is not in content (a bug in a component's check or in calc) goes on with its
    traceback, noting where the build was."""
    try:
        yield
    except ContentError:
        raise
    except Exception as err:
        err.add_note(f"while checking {component} on line {line} of {page.path}")
        raise


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


def derived_numbers(facts: Iterable[tuple[str, Any]]) -> list[DerivedNumber]:
    """Every number calc can print (the namespace's leaves), in the unit it is printed in."""
    found = []
    for path, value in facts:
        scaled = value.value / value.unit.scale if isinstance(value, Result) else float(value)
        found.append(DerivedNumber(path, scaled))
    return found


def guard_typed_numbers(page: Page, derived: list[DerivedNumber]) -> None:
    """Stop at a number typed into the prose that calc derives: it would not follow the calculation."""
    for children, line in page.inline_runs():
        for token in children:
            if token.type in ("softbreak", "hardbreak"):
                line += 1
            elif token.type == "text":
                _reject_typed_numbers(page, token.content, line, derived)


def _reject_typed_numbers(page: Page, text: str, line: int, derived: list[DerivedNumber]) -> None:
    text = NOT_QUANTITIES.sub(" ", _name_pattern().sub(" ", text))
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


@lru_cache(maxsize=1)
def _name_pattern() -> re.Pattern:
    """Product names carry digits ('Llama 3.1 8B', 'H100 SXM 80 GB') that are not quantities."""
    names = {m.name for m in CATALOGUE.values()} | {c.name for c in CARDS.values()}
    families = {" ".join(n.split()[:2]) for n in names}
    alternatives = sorted(names | families, key=len, reverse=True)
    return re.compile("|".join(re.escape(n) for n in alternatives))
