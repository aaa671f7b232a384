"""Arithmetic that writes itself down: operations on results that record their operands.

A result built here carries its worked line and the results it was made of, taken from the
computation itself, so a popover's "made of" chain is what was computed, in the build and in the
page after every recompute:

    pool, weights = term(accounting.pool), term(accounting.weights)
    budget = (pool - weights).result(GIB_HELD, "pool − weights")
    budget.worked  → "72.00 GiB − 14.96 GiB = 57.04 GiB"
    budget.inputs  → (accounting.pool, accounting.weights)

An operand shows itself as a reader redoes the sum with it: a result to the digits that are exact
(`Result.operand`), a whole number grouped, any other number as short as it is exact. A number
with no result behind it (a config field, a flag) becomes one with `field`, which remembers the
object and attribute it was read from, so the popover can name the config line it came from.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from .units import COUNT, Result, Unit, grouped, plain

SUM, PRODUCT, ATOM = 1, 2, 3


@dataclass(frozen=True)
class Expr:
    """A computation under way: its value, its worked line so far, and the results it used."""

    value: float
    text: str
    inputs: tuple[Result, ...] = ()
    binds: int = ATOM  # how tightly the text holds together: a sum needs brackets inside a product

    def _with(self, other: Any, symbol: str, binds: int, value: float) -> "Expr":
        right = lift(other)
        left_text = self.text if self.binds >= binds else f"({self.text})"
        # the right side of − and ÷ needs brackets at equal binding, too: a − (b + c), a ÷ (b × c);
        # a negative operand on the right always: a − (−3)
        tight = binds + (symbol in ("−", "÷"))
        negative = right.text.startswith(("−", "-"))
        right_text = right.text if right.binds >= tight and not negative else f"({right.text})"
        return Expr(value, f"{left_text} {symbol} {right_text}", _joined(self.inputs, right.inputs), binds)

    def __add__(self, other: Any) -> "Expr":
        return self._with(other, "+", SUM, self.value + lift(other).value)

    def __sub__(self, other: Any) -> "Expr":
        return self._with(other, "−", SUM, self.value - lift(other).value)

    def __mul__(self, other: Any) -> "Expr":
        return self._with(other, "×", PRODUCT, self.value * lift(other).value)

    def __truediv__(self, other: Any) -> "Expr":
        return self._with(other, "÷", PRODUCT, self.value / lift(other).value)

    def __floordiv__(self, other: Any) -> "Expr":
        """⌊a ÷ b⌋, exact: the floor of the true quotient, not of a rounded one."""
        right = lift(other)
        return Expr(self.value // right.value, f"⌊{(self / right).text}⌋", _joined(self.inputs, right.inputs))

    def __neg__(self) -> "Expr":
        text = self.text if self.binds == ATOM else f"({self.text})"
        return Expr(-self.value, f"−{text}", self.inputs, ATOM)

    def __rfloordiv__(self, other: Any) -> "Expr":
        return lift(other) // self

    def __radd__(self, other: Any) -> "Expr":
        return lift(other) + self

    def __rsub__(self, other: Any) -> "Expr":
        return lift(other) - self

    def __rmul__(self, other: Any) -> "Expr":
        return lift(other) * self

    def __rtruediv__(self, other: Any) -> "Expr":
        return lift(other) / self

    def result(self, unit: Unit, formula: str = "", shown: str | None = None) -> Result:
        """The finished result: this arithmetic, then ` = ` and the value as `unit` shows it (or `shown`)."""
        ending = unit.show(self.value) if shown is None else shown
        return Result(self.value, unit, formula=formula, worked=f"{self.text} = {ending}", inputs=self.inputs)


def term(value: Result | float, shown: str | None = None) -> Expr:
    """An operand: a result (recorded as an input) or a plain number (a constant of the rule)."""
    if isinstance(value, Result):
        return Expr(value.value, value.operand if shown is None else shown, (value,))
    return Expr(value, number_text(value) if shown is None else shown)


def field(owner: Any, name: str, unit: Unit = COUNT, what: str = "") -> Result:
    """A number read off a config or a datasheet, as a result that remembers where it was read."""
    value = getattr(owner, name)
    return Result(value, unit, formula=what or name.replace("_", " "), worked=unit.show(value), inputs=(),
                  origin=(owner, name))


def config_term(owner: Any, name: str) -> Expr:
    """A config or datasheet field as an operand, printed as the worked lines print whole numbers."""
    return term(field(owner, name), grouped(getattr(owner, name)))


def lift(value: Any) -> Expr:
    return value if isinstance(value, Expr) else term(value)


def number_text(value: float) -> str:
    """A constant as short as it is exact; one too small for six places, to four significant figures."""
    if isinstance(value, int) or float(value).is_integer():
        return grouped(value)
    return plain(value) if abs(value) >= 1e-4 else f"{value:.4g}"


def ceil(expr: Expr) -> Expr:
    return Expr(math.ceil(expr.value), f"⌈{expr.text}⌉", expr.inputs)


def ceil_div(numerator: Any, denominator: Any) -> Expr:
    """⌈a ÷ b⌉, exact for whole numbers."""
    quotient = lift(numerator) / lift(denominator)
    return Expr(-(-lift(numerator).value // lift(denominator).value), f"⌈{quotient.text}⌉", quotient.inputs)


def floor(expr: Expr) -> Expr:
    return Expr(math.floor(expr.value), f"⌊{expr.text}⌋", expr.inputs)


def maximum(*exprs: Expr) -> Expr:
    return _choice("max", max, exprs)


def minimum(*exprs: Expr) -> Expr:
    return _choice("min", min, exprs)


def total(exprs: Iterable[Expr]) -> Expr:
    """a + b + c …, as one sum."""
    exprs = list(exprs)
    out = exprs[0]
    for expr in exprs[1:]:
        out = out + expr
    return out


def _choice(word: str, pick, exprs: tuple[Expr, ...]) -> Expr:
    lifted = [lift(e) for e in exprs]
    inputs: tuple[Result, ...] = ()
    for e in lifted:
        inputs = _joined(inputs, e.inputs)
    return Expr(pick(e.value for e in lifted), f"{word}({', '.join(e.text for e in lifted)})", inputs)


def _joined(left: tuple[Result, ...], right: tuple[Result, ...]) -> tuple[Result, ...]:
    return left + tuple(r for r in right if not any(r is l for l in left))


def made_of(*results: Any) -> tuple[Result, ...]:
    """The results among `results`, once each, in order: the inputs of a result whose worked line is
    written by hand (a table look-up, an interpolation, a measured figure read off a log)."""
    found: tuple[Result, ...] = ()
    for r in results:
        if isinstance(r, Result) and not any(r is f for f in found):
            found += (r,)
    return found
