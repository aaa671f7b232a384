"""Checks a worked line's arithmetic at the precision it is shown.

A worked line is one or more chains separated by semicolons, `expression = expression = … → whole`, in the page's own notation:
thousands commas, true minus signs, ×, ÷, powers (^, binding tighter than × and ÷), π, ⌈ ⌉ and ⌊ ⌋, units after numbers (GiB, KiB, GB, TB/s,
ms, %, an attached ×), max, min and median of lists, and words ("blocks", "embedding") that carry no value. Every number shown
stands for the interval it could have been rounded from (± half its last digit), so a line holds
when each link of the chain overlaps the next, and when redoing each link by hand with the numbers
as printed lands within one unit of the last digit of the next; an arrow's whole number is the
floor of what stands before it.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass

UNITS = {
    "B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "GB": 1e9, "TB": 1e12,
    "GB/s": 1e9, "TB/s": 1e12, "TFLOP/s": 1e12, "FLOP": 1, "GFLOP": 1e9, "TFLOP": 1e12,
    "ms": 1e-3, "s": 1, "µs": 1e-6, "%": 0.01, "×": 1, "MiB/GiB": 1 / 1024,
    "tokens": 1, "users": 1, "tok/s": 1, "FLOP/B": 1,
}
HAND_TOLERANCE = 1e-3
FUNCTIONS = {"max": max, "min": min, "median": statistics.median}
_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?P<attached>[×%])?"  # 8,192 is one number; "5, 8" two
    r"|(?P<op>[×÷+−()⌈⌉⌊⌋,^])"
    r"|(?P<pi>π)"
    r"|(?P<word>[A-Za-zµ/$]+))")


class NotArithmetic(ValueError):
    """The text is prose, not a chain this checker reads."""


@dataclass(frozen=True)
class Span:
    lo: float
    hi: float

    def __add__(self, other: "Span") -> "Span":
        return Span(self.lo + other.lo, self.hi + other.hi)

    def __sub__(self, other: "Span") -> "Span":
        return Span(self.lo - other.hi, self.hi - other.lo)

    def __mul__(self, other: "Span") -> "Span":
        corners = [self.lo * other.lo, self.lo * other.hi, self.hi * other.lo, self.hi * other.hi]
        return Span(min(corners), max(corners))

    def __truediv__(self, other: "Span") -> "Span":
        if other.lo <= 0 <= other.hi:
            return Span(float("-inf"), float("inf"))
        return self * Span(1 / other.hi, 1 / other.lo)

    def __neg__(self) -> "Span":
        return Span(-self.hi, -self.lo)

    def overlaps(self, other: "Span") -> bool:
        slack = 1e-9 * max(abs(self.lo), abs(self.hi), abs(other.lo), abs(other.hi), 1e-300)
        return self.lo <= other.hi + slack and other.lo <= self.hi + slack


def _tokens(text: str, exact: bool = False) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            if text[position:].strip():
                raise NotArithmetic(f"cannot read {text[position:]!r}")
            break
        position = match.end()
        if match["number"]:
            digits = match["number"].replace(",", "")
            places = len(digits.partition(".")[2])
            value = float(digits)
            half = 0 if exact else 0.5 * 10 ** -places
            out.append(("number", Span(value - half, value + half)))
            if match["attached"]:
                out.append(("unit", UNITS[match["attached"]]))
        elif match["op"]:
            out.append(("op", match["op"]))
        elif match["pi"]:
            out.append(("number", Span(math.pi, math.pi)))
        elif match["word"] in FUNCTIONS:
            out.append(("op", match["word"]))
        elif match["word"] in UNITS:
            if out and out[-1][0] == "number":
                out.append(("unit", UNITS[match["word"]]))
        # any other word ("blocks", "embedding", "output head") carries no value
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, object]]):
        self.tokens = tokens
        self.at = 0

    def peek(self) -> tuple[str, object] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, object]:
        token = self.peek()
        if token is None:
            raise NotArithmetic("the expression ends early")
        self.at += 1
        return token

    def expression(self) -> Span:
        value = self.term()
        while self.peek() in (("op", "+"), ("op", "−")):
            op = self.take()[1]
            value = value + self.term() if op == "+" else value - self.term()
        return value

    def term(self) -> Span:
        value = self.factor()
        while self.peek() in (("op", "×"), ("op", "÷")):
            op = self.take()[1]
            value = value * self.factor() if op == "×" else value / self.factor()
        return value

    def factor(self) -> Span:
        """A power binds tighter than × and ÷, and to the right: a ^ b ^ c is a ^ (b ^ c)."""
        base = self.operand()
        if self.peek() != ("op", "^"):
            return base
        self.take()
        exponent = self.factor()
        if base.lo <= 0:
            raise NotArithmetic("a power of a number that may be zero or negative")
        corners = [b ** e for b in (base.lo, base.hi) for e in (exponent.lo, exponent.hi)]
        return Span(min(corners), max(corners))

    def operand(self) -> Span:
        kind, token = self.take()
        if kind == "op" and token == "−":
            return -self.factor()
        if kind == "op" and token in FUNCTIONS:
            if self.take() != ("op", "("):
                raise NotArithmetic(f"{token} without (")
            values = [self.expression()]
            while self.peek() == ("op", ","):
                self.take()
                values.append(self.expression())
            if self.take() != ("op", ")"):
                raise NotArithmetic(f"unclosed {token}(")
            pick = FUNCTIONS[token]
            return Span(pick([v.lo for v in values]), pick([v.hi for v in values]))
        if kind == "op" and token in "(⌈⌊":
            inner = self.expression()
            closing = {"(": ")", "⌈": "⌉", "⌊": "⌋"}[token]
            if self.take() != ("op", closing):
                raise NotArithmetic(f"unclosed {token}")
            if token == "⌈":
                return Span(float(-(-inner.lo // 1)), float(-(-inner.hi // 1)))
            if token == "⌊":
                return Span(float(inner.lo // 1), float(inner.hi // 1))
            return inner
        if kind == "number":
            assert isinstance(token, Span)
            if self.peek() and self.peek()[0] == "unit":
                scale = self.take()[1]
                return token * Span(scale, scale)
            return token
        raise NotArithmetic(f"unexpected {token!r}")


def evaluate(text: str, exact: bool = False) -> Span:
    parser = _Parser(_tokens(text, exact))
    value = parser.expression()
    if parser.peek() is not None:
        raise NotArithmetic(f"left over: {parser.tokens[parser.at:]}")
    return value


def check(worked: str) -> list[str]:
    """What is wrong with a worked line's arithmetic: empty when every link holds."""
    return [problem for chain in worked.split(";") for problem in _check_chain(chain)]


def _check_chain(worked: str) -> list[str]:
    if "=" not in worked:
        return []
    chain, _, floored = worked.partition("→")
    parts = chain.split("=")
    links = [evaluate(part) for part in parts]
    problems = []
    for left, right in zip(links, links[1:]):
        if not left.overlaps(right):
            problems.append(f"{worked!r}: [{left.lo:.6g}, {left.hi:.6g}] does not reach [{right.lo:.6g}, {right.hi:.6g}]")
    for left_text, right_text, right in zip(parts, parts[1:], links[1:]):
        # A reader redoing the sum with the numbers as printed must land within one unit of the
        # last digit printed, or a tenth of a per cent: rounded operands may not hide a different answer.
        by_hand = evaluate(left_text, exact=True).lo
        shown = evaluate(right_text, exact=True).lo
        if abs(by_hand - shown) > (right.hi - right.lo) + HAND_TOLERANCE * abs(shown):
            problems.append(f"{worked!r}: the printed numbers give {by_hand:.6g}, not {shown:.6g}")
    if floored.strip():
        whole = evaluate(floored).lo + 0.5
        last = links[-1]
        if not (last.lo // 1 <= whole <= last.hi // 1):
            problems.append(f"{worked!r}: {whole:g} is not the floor of [{last.lo:.6g}, {last.hi:.6g}]")
    return problems
