"""Looking a fact up by its dotted name, and showing it: the one formatting the pages use."""
from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any, Iterator, Mapping

from .units import Result, grouped, plain

FILTERS = ("number", "worked", "formula", "digits N")


@dataclasses.dataclass(frozen=True)
class Cell:
    """A table cell that shows one fact, named by its path from where the table sits (`cards.l4.users`
    in the table at `hardware.phase_table` is `hardware.cards.l4.users`), with words before or after it."""

    path: str
    before: str = ""
    after: str = ""


@dataclasses.dataclass(frozen=True)
class Table:
    """A table drawn from facts (content writes `@table hardware.phase_table`): built from a list such
    as the cards calc knows, so an entry added to the list gains its row. Headings and cells are plain
    text or a Cell."""

    columns: tuple[str | Cell, ...]
    rows: tuple[tuple[str | Cell, ...], ...]


class UnknownFact(KeyError):
    """A reference that names nothing: carries the closest names that do exist."""

    def __init__(self, path: str, known: list[str]):
        super().__init__(path)
        self.path = path
        self.known = known


def resolve(namespace: Mapping[str, Any], path: str) -> Any:
    """`ladder.kv_budget` → namespace['ladder'].kv_budget; dict keys and attributes alike."""
    value: Any = namespace
    walked: list[str] = []
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif not isinstance(value, Mapping) and not part.startswith("_") and hasattr(value, part):
            value = getattr(value, part)
        else:
            raise UnknownFact(path, sorted(".".join(walked + [name]) for name in _names(value)))
        walked.append(part)
    return value


def show(value: Any, filter_name: str = "", digits: int | None = None) -> str:
    """A fact as the page prints it. `number` drops the unit; `worked` gives the arithmetic."""
    if isinstance(value, Result):
        if filter_name == "worked":
            return value.worked
        if filter_name == "formula":
            return value.formula
        return value.number(digits) if filter_name == "number" else value.show(digits)
    if filter_name in ("worked", "formula"):
        raise TypeError(f"'{filter_name}' needs a derived result, and this is a plain {type(value).__name__}")
    if isinstance(value, bool) or value is None:
        raise TypeError("names a yes/no flag, not something to print")
    if isinstance(value, int):
        return grouped(value)
    if isinstance(value, float):
        return grouped(value, digits) if digits is not None else plain(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"names a {type(value).__name__}, not a number or text; pick one of its fields")


class BadFilter(ValueError):
    pass


def figure(namespace: Mapping[str, Any], ref: str) -> tuple[str, str]:
    """A reference as the page shows it: its text, and its arithmetic for the tooltip.

    `ref` is `path`, `path|number`, `path|worked`, `path|formula` or `path|digits N`: the same
    string content writes between braces, the build puts in `data-ref`, and a calculator asks for.
    """
    path, _, spec = ref.partition("|")
    filter_name, _, count = spec.strip().partition(" ")
    digits = None
    if filter_name == "digits" and count.strip().isdigit():
        filter_name, digits = "", int(count)
    elif filter_name not in ("", "number", "worked", "formula") or count:
        raise BadFilter(f"unknown filter '{spec.strip()}' (known: {', '.join(FILTERS)})")
    value = resolve(namespace, path.strip())
    text = show(value, filter_name, digits)
    title = value.worked if isinstance(value, Result) and filter_name != "worked" else ""
    return text, title


def _names(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [str(k) for k in value]
    if dataclasses.is_dataclass(value):
        # Properties a class inherits (calc.engine.memory.Rungs) count too, the base's first.
        props = [n for cls in reversed(type(value).__mro__) for n, a in vars(cls).items()
                 if isinstance(a, (property, cached_property))]
        return [f.name for f in dataclasses.fields(value)] + list(dict.fromkeys(props))
    return []


def leaves(namespace: Mapping[str, Any], depth: int = 4) -> Iterator[tuple[str, Any]]:
    """Every printable fact under the namespace, with its dotted name (an object once, at its shortest)."""
    # Objects are kept, not just their ids: a property may build a fresh object each time, and an
    # id freed by the garbage collector can be handed to the next one, which would then be skipped.
    seen: dict[int, Any] = {}

    def walk(prefix: str, value: Any, left: int) -> Iterator[tuple[str, Any]]:
        if isinstance(value, (Result, int, float)) and not isinstance(value, bool):
            yield prefix, value
            return
        if left == 0 or isinstance(value, str) or id(value) in seen:
            return
        seen[id(value)] = value
        for name in _names(value):
            try:
                child = resolve({"v": value}, f"v.{name}")
            except (UnknownFact, ArithmeticError, ValueError):
                continue
            yield from walk(f"{prefix}.{name}" if prefix else name, child, left - 1)

    for key, value in namespace.items():
        yield from walk(key, value, depth)
