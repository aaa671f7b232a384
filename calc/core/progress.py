"""How far a long computation has got, told to whoever asked while it runs.

A calculator's answer comes back in one piece, but a few (document 15's simulated sweep) take
seconds in the page; they call `report` as they go, and the page's worker, which passes a listener
to `calc.calculators.run_json`, relays each report to the calculator's status line. Without a
listener (the build, the tests) a report does nothing.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

Listener = Callable[[int, int, str], object]

_listeners: list[Listener] = []


def report(done: int, total: int, what: str) -> None:
    """`done` of `total` steps of `what` (a plural noun phrase: "request rates simulated") finished."""
    if _listeners:
        _listeners[-1](done, total, what)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Reports made inside the block go to `listener` (none: they go nowhere)."""
    if listener is None:
        yield
        return
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.pop()
