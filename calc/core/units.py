"""Units and the house rules for showing them.

Values are carried exact, in base units (bytes, bytes per second, FLOP/s, tokens), from the
first input to the last result. Rounding happens once, here, when a number is shown:

- memory held (weights, cache, budgets): GiB, or KiB for a per-token amount;
- bytes moved in a step: GB (decimal);
- bandwidth: GB/s or TB/s (decimal);
- counts: whole numbers with thousands separators.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

KiB = 1024
MiB = 1024 ** 2
GiB = 1024 ** 3
GB = 1000 ** 3
TB = 1000 ** 4


def grouped(number: float, decimals: int = 0) -> str:
    """A number with thousands separators and a fixed number of decimals: 131072 -> '131,072'.
    A negative number takes a true minus sign, as in the ladder's subtractions; one that rounds
    to zero is shown as zero, unsigned."""
    text = f"{number:,}" if isinstance(number, int) and decimals == 0 else f"{number:,.{decimals}f}"
    if text[0] != "-":
        return text
    if not any(digit in text for digit in "123456789"):
        return text[1:]
    return "−" + text[1:]


def plain(number: float) -> str:
    """A number as short as it can be shown without losing anything: 0.90 -> '0.9', 8192 -> '8,192'."""
    if float(number).is_integer():
        return grouped(number)
    return f"{number:,.6f}".rstrip("0").rstrip(".")


def _exact_places(number: float, fewest: int, most: int) -> int:
    """The fewest decimal places from `fewest` up to `most` that show `number` exactly, or `most`.
    A number exact to some places is exact to every place after, so one rounding at `most` settles
    the usual case, a number exact to none of them, without trying each place in turn."""
    if fewest >= most or not _shows_exactly(number, most):
        return max(fewest, most)
    while not _shows_exactly(number, fewest):
        fewest += 1
    return fewest


def _shows_exactly(number: float, places: int) -> bool:
    """Whether `places` decimals show `number` as it is, to within the last bits of a float: a value
    one rounding error from 9.5 is 9.5, whichever libm (CPython's or the page's WebAssembly) made it."""
    return abs(round(number, places) - number) <= 1e-12 * max(1.0, abs(number))


@dataclass(frozen=True)
class Unit:
    """How one kind of quantity is shown: the number, and the symbol after it."""

    name: str
    scale: float
    symbol: str
    decimals: int
    spaced: bool = True
    exact_up_to: int = 0
    significant: int = 0
    prefix: str = ""  # a symbol written before the number, as $ is
    singular: str = ""  # the symbol after a number shown as exactly 1 ("1 token"), when it differs

    def number(self, value: float, decimals: int | None = None) -> str:
        """`decimals` places, or the unit's own; a unit with `exact_up_to` adds places (up to that
        many) until the number shown is the number used, so 0.999 never prints as 1.00, and one
        with `significant` adds places until a small number shows that many significant digits."""
        scaled = value / self.scale
        places = self.decimals if decimals is None else decimals
        if decimals is None:
            places = _exact_places(scaled, places, self.exact_up_to)
            if self.significant and scaled and math.isfinite(scaled):
                needed = self.significant - 1 - math.floor(math.log10(abs(scaled)))
                places = min(max(places, needed), 6)
        return grouped(scaled, places)

    def precise(self, value: float, significant: int = 5) -> str:
        """Shown to `significant` digits, or fewer when fewer are exact: for an operand a reader
        will redo the arithmetic with."""
        scaled = value / self.scale
        if not scaled or not math.isfinite(scaled):
            return self.show(value)
        needed = min(max(significant - 1 - math.floor(math.log10(abs(scaled))), self.decimals), 15)
        return self.show(value, _exact_places(scaled, self.decimals, needed))

    def show(self, value: float, decimals: int | None = None) -> str:
        number = self.prefix + self.number(value, decimals)
        symbol = self.singular if self.singular and number == "1" else self.symbol
        if not symbol:
            return number
        return f"{number} {symbol}" if self.spaced else f"{number}{symbol}"


GIB_HELD = Unit("GiB", GiB, "GiB", 2)
KIB_HELD = Unit("KiB", KiB, "KiB", 0, exact_up_to=2)
GB_MOVED = Unit("GB", GB, "GB", 2, significant=3)
TB_PER_S = Unit("TB/s", TB, "TB/s", 2, exact_up_to=3)
GB_PER_S = Unit("GB/s", GB, "GB/s", 0)
GB_PER_S_FINE = Unit("GB/s", GB, "GB/s", 1)
TFLOPS = Unit("TFLOP/s", 1e12, "TFLOP/s", 0, exact_up_to=1)
GFLOP = Unit("GFLOP", 1e9, "GFLOP", 1, significant=2)
TFLOP = Unit("TFLOP", 1e12, "TFLOP", 2, significant=2)
FLOP_PER_BYTE = Unit("FLOP/B", 1, "FLOP/B", 0)
TOKENS_PER_S = Unit("tok/s", 1, "tok/s", 0)
COUNT = Unit("count", 1, "", 0)
TOKENS = Unit("tokens", 1, "tokens", 0)
TOKENS_FINE = Unit("tokens", 1, "tokens", 0, exact_up_to=2, singular="token")
RATIO = Unit("ratio", 1, "×", 1, spaced=False)
RATIO_FINE = Unit("ratio", 1, "×", 2, spaced=False)
TIMES = Unit("times", 1, "×", 0, spaced=False)
PERCENT = Unit("percent", 0.01, "%", 0, spaced=False)
SHARE = Unit("percent", 0.01, "%", 1, spaced=False)
MS = Unit("ms", 0.001, "ms", 1, significant=2)
MS_WHOLE = Unit("ms", 0.001, "ms", 0)
MS_FINE = Unit("ms", 0.001, "ms", 2)
SECONDS = Unit("s", 1, "s", 0, exact_up_to=2)
FRACTION = Unit("fraction", 1, "", 2, exact_up_to=6)
MIB_REPORTED = Unit("MiB", MiB, "MiB", 0)
BYTES = Unit("B", 1, "B", 0)
MICROSECONDS = Unit("µs", 1e-6, "µs", 1, significant=2)


@dataclass(frozen=True)
class Result:
    """A derived number that can show its own arithmetic.

    `value` is exact and in base units; `unit` decides how it is shown; `formula` is the
    rule in words and `worked` the same rule with the numbers put in, ending in the result.
    `inputs` are the results the computation used, in the order its worked line shows them
    (calc.core.arith records them; None where nothing was recorded, () where nothing was used);
    `origin` is the object and attribute a given was read off (a config field, a datasheet line).
    Neither takes part in equality.
    """

    value: float
    unit: Unit
    formula: str = ""
    worked: str = ""
    inputs: tuple["Result", ...] | None = field(default=None, compare=False, repr=False)
    origin: tuple[Any, str] | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.unit.show(self.value)

    def show(self, decimals: int | None = None) -> str:
        return self.unit.show(self.value, decimals)

    @property
    def operand(self) -> str:
        """The value as an operand in someone else's arithmetic: precise enough to redo by hand."""
        return self.unit.precise(self.value)

    def number(self, decimals: int | None = None) -> str:
        return self.unit.number(self.value, decimals)


def given(value: float, unit: Unit, what: str = "") -> Result:
    """An input rather than a derivation: it shows itself as its own arithmetic."""
    return Result(value, unit, formula=what, worked=unit.show(value))


def floor_count(numerator: float, denominator: float) -> int:
    """Whole things that fit: the floor of the exact quotient, never of a rounded one."""
    if denominator <= 0:
        raise ValueError("cannot divide a budget by a size that is zero or negative")
    if numerator <= 0:
        return 0
    return int(numerator // denominator)

