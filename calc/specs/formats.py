"""Number formats from their definitions: what each bit pattern means, and how a real number is
encoded into it exactly (round to nearest, ties to even; overflow as the format defines it).

Nothing here is read from a table of ranges. A float format is its sign bit, its exponent and
mantissa widths, its bias and its rule for the top patterns; every range, step and neighbour below
is computed from those, with exact fractions, so the page can show a value, the two representable
numbers around it and the error. Block formats are their storage layouts: the bits a block of
weights costs, scales included, divided by the weights in it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.arith import field, made_of, term, total
from ..core.units import COUNT, Result, Unit, grouped, plain

IEEE_754 = "IEEE 754-2019, binary32 and binary16 (round to nearest, ties to even; overflow to infinity)"
BFLOAT16 = ("Google's bfloat16: the top half of binary32, 8 exponent bits and 7 stored mantissa bits "
            "(cloud.google.com/tpu/docs/bfloat16)")
OCP_FP8 = ("OCP 8-bit Floating Point Specification (OFP8) v1.0, 2023 (opencompute.org): E4M3 has no infinities and "
           "one NaN pattern per sign (S.1111.111), so its largest value is 448; E5M2 follows IEEE 754, largest 57,344; "
           "conversion may saturate to the largest finite value, which is what scaled fp8 kernels do")
FNUZ_FP8 = ("The FNUZ variant (Graphcore's proposal, AMD's MI300 float8_e4m3fnuz): bias 8, no negative zero, the "
            "pattern 1.0000.000 is the only NaN, so its largest value is 240")
OCP_MX = ("OCP Microscaling Formats (MX) Specification v1.0, 2023: MXFP4 is 32 FP4 E2M1 elements sharing one "
          "E8M0 scale (a power of two); E2M1 has no infinity or NaN, largest 6")
NVFP4 = ("NVIDIA, NVFP4 (Blackwell): 16 FP4 E2M1 elements sharing one FP8 E4M3 scale, plus one FP32 scale per tensor")
GGML = ("llama.cpp, ggml/src/ggml-common.h: block_q4_0, block_q8_0 (32 weights); block_q4_K, block_q6_K "
        "(super-blocks of QK_K = 256 weights, K_SCALE_SIZE = 12)")
GROUPED_INT4 = ("AWQ and GPTQ checkpoints: 4-bit weights in groups of 128 input channels, an fp16 scale per group "
                "and a zero point per group (AutoAWQ packs the zero points as 4-bit integers)")


SHIFT = 1200  # exact arithmetic: every double and every format's value is a whole number of 2^−1200


def units(x: float) -> int:
    """A finite double as an exact whole number of 2^−SHIFT (its denominator is a power of two)."""
    numerator, denominator = float(x).as_integer_ratio()
    return numerator * (2 ** SHIFT // denominator)


def from_units(count: int) -> float:
    """Back to a double: Python divides big integers with correct rounding."""
    return count / 2 ** SHIFT


class Real(Unit):
    """A real number shown to `significant` digits (fewer when fewer are exact): decimals between
    10^−4 and 10^9, otherwise m × 10^k, which a reader can still redo by hand."""

    def number(self, value: float, decimals: int | None = None) -> str:
        scaled = value / self.scale
        if not math.isfinite(scaled):
            return "infinity" if scaled > 0 else "−infinity" if scaled < 0 else "not a number"
        if scaled == 0:
            return "0"
        digits = decimals or self.significant
        if self.exact_up_to or 1e-4 <= abs(scaled) < 1e9:
            if float(scaled).is_integer() and abs(scaled) < 1e15:
                return grouped(int(scaled))
            places = max(digits - 1 - math.floor(math.log10(abs(scaled))), 0)
            text = f"{scaled:,.{places}f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            return text.replace("-", "−")
        exponent = math.floor(math.log10(abs(scaled)))
        mantissa = scaled / 10 ** exponent
        if round(abs(mantissa), digits - 1) >= 10:
            exponent, mantissa = exponent + 1, mantissa / 10
        text = f"{mantissa:.{digits - 1}f}".rstrip("0").rstrip(".")
        return f"{text} × 10^{exponent}".replace("-", "−")


VALUE = Real("value", 1, "", 0, significant=10)
RELATIVE = Real("percent", 0.01, "%", 0, spaced=False, significant=3, exact_up_to=1)
BITS = Unit("bits", 1, "bits", 0, exact_up_to=6)


def power(exponent: int) -> str:
    """2^k as the worked lines write it: 2^−6, 2^8."""
    return f"2^{exponent}".replace("-", "−")


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format. `top`: what the all-ones exponent means.
    'ieee': infinities and NaNs (so the largest finite exponent is one below it);
    'fn': finite, except the single pattern with every exponent and mantissa bit set (OCP E4M3);
    'fnuz': every pattern finite but 1.0000…0, the one NaN, and the bias one larger (no −0);
    'finite': every pattern is a number (E2M1)."""

    key: str
    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    top: str
    saturates: bool
    source: str

    @property
    def width(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def top_exponent(self) -> int:
        """The largest exponent a finite number can have."""
        field = 2 ** self.exponent_bits - (2 if self.top == "ieee" else 1)
        return field - self.bias

    @property
    def min_exponent(self) -> int:
        """The smallest normal exponent: exponent field 1."""
        return 1 - self.bias

    @property
    def largest_steps(self) -> int:
        """The largest finite mantissa field: all bits set, or all but the last where that pattern
        is the NaN (OCP E4M3)."""
        return 2 ** self.mantissa_bits - (2 if self.top == "fn" else 1)


    @property
    def largest(self) -> Result:
        m, steps = self.mantissa_bits, self.largest_steps
        value = from_units(_max_units(self))
        return Result(value, VALUE, formula="(1 + largest mantissa ÷ 2^m) × 2^(largest exponent − bias)",
                      worked=(f"(1 + {steps} ÷ {power(m)}) × {power(self.top_exponent)} = {VALUE.show(value)}"),
                      inputs=self._read("mantissa_bits", "exponent_bits", "bias"))

    def _read(self, *names: str) -> tuple[Result, ...]:
        """The format's own fields a worked line of powers of two rests on (the line is written by
        hand: arith has no powers)."""
        return made_of(*(field(self, name) for name in names))

    @property
    def smallest_normal(self) -> Result:
        value = 2.0 ** self.min_exponent
        return Result(value, VALUE, formula="2^(1 − bias)",
                      worked=f"{power(1)} ÷ {power(self.bias)} = {VALUE.show(value)}", inputs=self._read("bias"))

    @property
    def smallest_subnormal(self) -> Result:
        exponent = self.min_exponent - self.mantissa_bits
        value = 2.0 ** exponent
        return Result(value, VALUE, formula="2^(1 − bias − m)",
                      worked=f"{power(1)} ÷ {power(self.bias)} ÷ {power(self.mantissa_bits)} = {VALUE.show(value)}",
                      inputs=self._read("bias", "mantissa_bits"))

    @property
    def step_at_one(self) -> Result:
        """The gap from 1 to the next number up: the format's precision, 2^−m."""
        value = 2.0 ** -self.mantissa_bits
        return Result(value, VALUE, formula="2^−m", worked=f"1 ÷ {power(self.mantissa_bits)} = {VALUE.show(value)}",
                      inputs=self._read("mantissa_bits"))

    @property
    def worst_relative(self) -> Result:
        """The largest relative error rounding can make in the normal range: half a step at 1."""
        value = 2.0 ** -(self.mantissa_bits + 1)
        return Result(value, RELATIVE, formula="2^−(m + 1)",
                      worked=f"1 ÷ {power(self.mantissa_bits + 1)} = {RELATIVE.show(value)}",
                      inputs=self._read("mantissa_bits"))

    @property
    def binades(self) -> Result:
        """Powers of two spanned from the smallest subnormal to the largest value."""
        value = math.log2(from_units(_max_units(self))) - (self.min_exponent - self.mantissa_bits)
        return Result(value, Unit("binades", 1, "binades", 1), formula="log2(largest) − log2(smallest subnormal)",
                      worked=(f"{plain(round(math.log2(from_units(_max_units(self))), 3))} + "
                              f"{self.mantissa_bits - self.min_exponent} = {grouped(value, 1)} binades"),
                      inputs=made_of(self.largest, *self._read("mantissa_bits", "bias")))

    @property
    def layout(self) -> str:
        return f"1 sign, {self.exponent_bits} exponent, {self.mantissa_bits} mantissa bits, bias {self.bias}"


def _max_units(fmt: FloatFormat) -> int:
    """The largest finite value, (2^m + largest mantissa field) × 2^(top exponent − m), in units of 2^−SHIFT."""
    return (2 ** fmt.mantissa_bits + fmt.largest_steps) * 2 ** (fmt.top_exponent - fmt.mantissa_bits + SHIFT)


@dataclass(frozen=True)
class IntFormat:
    """A two's-complement integer: a scale outside it says what one step is worth."""

    key: str
    name: str
    width: int
    source: str = "two's complement; the scale that gives it meaning is stored beside it"

    @property
    def lowest(self) -> int:
        return -(2 ** (self.width - 1))

    @property
    def highest(self) -> int:
        return 2 ** (self.width - 1) - 1

    @property
    def largest(self) -> Result:
        return Result(self.highest, VALUE, formula="2^(bits − 1) − 1",
                      worked=f"{power(self.width - 1)} − 1 = {grouped(self.highest)}", inputs=made_of(field(self, "width")))

    @property
    def levels(self) -> Result:
        return Result(2 ** self.width, COUNT, formula="2^bits", worked=f"{power(self.width)} = {grouped(2 ** self.width)}",
                      inputs=made_of(field(self, "width")))

    @property
    def layout(self) -> str:
        return f"{self.width} bits, two's complement, {grouped(self.lowest)} to {grouped(self.highest)}"


FP32 = FloatFormat("fp32", "fp32", 8, 23, 127, "ieee", False, IEEE_754)
FP16 = FloatFormat("fp16", "fp16", 5, 10, 15, "ieee", False, IEEE_754)
BF16 = FloatFormat("bf16", "bf16", 8, 7, 127, "ieee", False, BFLOAT16)
E4M3 = FloatFormat("e4m3", "fp8 E4M3", 4, 3, 7, "fn", True, OCP_FP8)
E5M2 = FloatFormat("e5m2", "fp8 E5M2", 5, 2, 15, "ieee", False, OCP_FP8)
E4M3_FNUZ = FloatFormat("e4m3fnuz", "fp8 E4M3 FNUZ", 4, 3, 8, "fnuz", True, FNUZ_FP8)
E2M1 = FloatFormat("e2m1", "fp4 E2M1", 2, 1, 1, "finite", True, OCP_MX)
INT8 = IntFormat("int8", "int8", 8)
INT4 = IntFormat("int4", "int4", 4)

FLOATS: dict[str, FloatFormat] = {f.key: f for f in (FP32, FP16, BF16, E4M3, E5M2, E2M1)}
INTS: dict[str, IntFormat] = {f.key: f for f in (INT8, INT4)}


@dataclass(frozen=True)
class Encoded:
    """A real number stored in one format: the bits, the value they mean, the representable
    numbers either side of the input (equal when it is exact), and the error."""

    format: FloatFormat | IntFormat
    given: float
    _value: float  # may be infinite: shown only through `stored` (a leading _ keeps it out of the facts)
    sign: str
    exponent: str
    mantissa: str
    below: float | None
    above: float | None
    note: str

    @property
    def bits(self) -> str:
        return " ".join(part for part in (self.sign, self.exponent, self.mantissa) if part)

    @property
    def stored(self) -> Result:
        return Result(self._value, VALUE, formula=f"the nearest {self.format.name} value", worked=self._meaning(),
                      inputs=(self._given,))

    @property
    def _given(self) -> Result:
        """The number typed, as a result that remembers it was read off this encoding: `field` without
        its display rounding, which every fp16 pattern would pay for."""
        return Result(self.given, VALUE, formula="the number typed", worked=_operand(self.given), origin=(self, "given"))

    @property
    def neighbours(self) -> str:
        if self.below is not None and self.below == self.above:
            return f"{VALUE.show(self.below)} exactly"
        low = VALUE.show(self.below) if self.below is not None else "nothing"
        high = VALUE.show(self.above) if self.above is not None else "nothing (beyond the largest)"
        return f"{low} and {high}"

    @property
    def error(self) -> Result:
        if not math.isfinite(self._value):
            return Result(math.inf, VALUE, formula="stored − given", worked=f"{self.note}: the error is unbounded",
                          inputs=made_of(self.stored))
        # the difference is taken exactly, in units of 2^−SHIFT, not as the floats' subtraction
        value = from_units(units(self._value) - units(self.given))
        return Result(value, VALUE, formula="stored − given",
                      worked=f"{_operand(self._value)} − {_operand(self.given)} = {_operand(value)}",
                      inputs=made_of(self.stored, self._given))

    @property
    def relative(self) -> Result:
        if not math.isfinite(self._value) or self.given == 0:
            why = self.note if not math.isfinite(self._value) else "zero is stored exactly"
            return Result(0.0 if self.given == 0 else math.inf, RELATIVE, formula="|stored − given| ÷ |given|",
                          worked=why, inputs=made_of(self.stored, self._given))
        value = abs(from_units(units(self._value) - units(self.given))) / abs(self.given)
        return Result(value, RELATIVE, formula="|stored − given| ÷ |given|",
                      worked=f"{_operand(abs(self._value - self.given))} ÷ {_operand(abs(self.given))} = {RELATIVE.show(value)}",
                      inputs=made_of(self.error, self._given))

    def _meaning(self) -> str:
        fmt = self.format
        if self.note:
            return f"{self.note}: {VALUE.show(self._value)}"
        if isinstance(fmt, IntFormat):
            return f"the nearest whole number to {_operand(self.given)}, ties to even: {VALUE.show(self._value)}"
        if self._value == 0:
            return f"{_operand(self.given)} is below half the smallest step: stored as 0"
        exponent_field, mantissa_field = int(self.exponent, 2), int(self.mantissa or "0", 2)
        sign = "−" if self.sign == "1" else ""
        m = fmt.mantissa_bits
        if exponent_field == 0:
            return (f"{sign}{mantissa_field} ÷ {power(m)} × {power(fmt.min_exponent)} = "
                    f"{VALUE.show(self._value)}")
        return (f"{sign}(1 + {mantissa_field} ÷ {power(m)}) × {power(exponent_field - fmt.bias)} = "
                f"{VALUE.show(self._value)}")


def _operand(value: float) -> str:
    """A value as the shortest decimal that reads back as the same double (Python's repr), in the
    page's notation: enough for the error's subtraction to be redone by hand."""
    if value == 0:
        return "0"
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    if mantissa.endswith(".0"):
        mantissa = mantissa[:-2]
    if exponent:
        return f"({mantissa} × 10^{int(exponent)})".replace("-", "−")
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    shown = f"{int(whole):,}" + (f".{fraction}" if fraction else "")
    return f"(−{shown})" if value < 0 else shown


def _round_even(numerator: int, denominator: int) -> int:
    """numerator ÷ denominator to the nearest whole number, ties to even (floor division throughout,
    so negative quotients round the same way)."""
    floor, rest = divmod(numerator, denominator)
    if 2 * rest > denominator or (2 * rest == denominator and floor % 2):
        return floor + 1
    return floor


def _exponent_of(magnitude: int) -> int:
    """⌊log2⌋ of a positive count of 2^−SHIFT units, as a power of two of the value itself."""
    return magnitude.bit_length() - 1 - SHIFT


def encode(x: float, fmt: FloatFormat | IntFormat) -> Encoded:
    """`x` stored in `fmt`: round to nearest, ties to even; beyond the largest value, infinity
    where the format has one and does not saturate, otherwise the largest value (saturation)."""
    if not math.isfinite(x):
        raise ValueError("encode a finite number: infinities and NaNs are patterns, not values to round")
    if isinstance(fmt, IntFormat):
        return _encode_int(x, fmt)
    negative = math.copysign(1.0, x) < 0
    magnitude = abs(units(x))
    m, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    sign_bit = "1" if negative and not (fmt.top == "fnuz" and magnitude == 0) else "0"
    signed = (lambda v: -v if negative else v)
    if magnitude == 0:
        return Encoded(fmt, x, -0.0 if sign_bit == "1" else 0.0, sign_bit, "0" * e_bits, "0" * m, x, x, "")
    exponent = max(_exponent_of(magnitude), fmt.min_exponent)
    quantum = 2 ** (exponent - m + SHIFT)
    steps = _round_even(magnitude, quantum)
    low = (magnitude // quantum) * quantum
    high = low if low == magnitude else low + quantum
    largest = _max_units(fmt)
    if low > largest:
        low, high = largest, largest + 1
    note = ""
    value = steps * quantum
    if value > largest:
        if fmt.saturates:
            value, note = largest, "beyond the largest value: saturated"
        else:
            inf = -math.inf if negative else math.inf
            return Encoded(fmt, x, inf, sign_bit, "1" * e_bits, "0" * m, from_units(signed(largest)), None,
                           "overflow to infinity")
    # the pattern: renormalise a rounding that carried into the next power of two
    if value < 2 ** (fmt.min_exponent + SHIFT):
        exponent_field, mantissa_field = 0, value // 2 ** (fmt.min_exponent - m + SHIFT)
    else:
        e = _exponent_of(value)
        exponent_field = e + fmt.bias
        mantissa_field = value // 2 ** (e - m + SHIFT) - 2 ** m
    above = from_units(signed(high)) if high <= largest else None
    below = from_units(signed(low))
    if negative:
        below, above = above, below
    return Encoded(fmt, x, from_units(signed(value)), sign_bit, format(exponent_field, f"0{e_bits}b"),
                   format(mantissa_field, f"0{m}b") if m else "", below, above, note)


def _encode_int(x: float, fmt: IntFormat) -> Encoded:
    exact = units(x)
    steps = _round_even(exact, 2 ** SHIFT)
    note = ""
    if steps > fmt.highest or steps < fmt.lowest:
        steps = max(min(steps, fmt.highest), fmt.lowest)
        note = "beyond the range: saturated"
    low, high = math.floor(x), math.ceil(x)
    below = float(min(low, fmt.highest)) if low >= fmt.lowest else None
    above = float(max(high, fmt.lowest)) if high <= fmt.highest else None
    pattern = format(steps % 2 ** fmt.width, f"0{fmt.width}b")
    return Encoded(fmt, x, float(steps), "", pattern, "", below, above, note)


def decode(fmt: FloatFormat, pattern: int) -> float:
    """The value of one bit pattern of `fmt`, from its definition (NaN for the NaN patterns)."""
    m, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    sign = -1.0 if pattern >> (e_bits + m) & 1 else 1.0
    exponent_field = pattern >> m & (2 ** e_bits - 1)
    mantissa_field = pattern & (2 ** m - 1)
    top = 2 ** e_bits - 1
    if fmt.top == "ieee" and exponent_field == top:
        return math.nan if mantissa_field else sign * math.inf
    if fmt.top == "fn" and exponent_field == top and mantissa_field == 2 ** m - 1:
        return math.nan
    if fmt.top == "fnuz" and pattern == 1 << (e_bits + m):
        return math.nan
    if exponent_field == 0:
        return sign * mantissa_field * 2.0 ** (fmt.min_exponent - m)
    return sign * (1 + mantissa_field / 2 ** m) * 2.0 ** (exponent_field - fmt.bias)


# ---- block formats: bits on disk per weight, scales included ----

@dataclass(frozen=True)
class Part:
    """One field of a block's storage: `count` values of `bits` each."""

    name: str
    count: int
    bits: int


@dataclass(frozen=True)
class BlockFormat:
    """A block of `weights` stored together with what it shares: the bits per weight follow."""

    key: str
    name: str
    weights: int
    parts: tuple[Part, ...]
    source: str
    element: str

    @property
    def total_bits(self) -> int:
        return sum(p.count * p.bits for p in self.parts)

    @property
    def bits_per_weight(self) -> Result:
        value = self.total_bits / self.weights
        formula = "(every field of the block, in bits) ÷ weights per block"
        weights = field(self, "weights")
        if len(self.parts) > 1:  # one part would print without its brackets
            bits = total(term(p.count) * term(p.bits) for p in self.parts)
            return (bits / term(weights, grouped(self.weights))).result(BITS, formula)
        shown = " + ".join(f"{grouped(p.count)} × {p.bits}" for p in self.parts)
        return Result(value, BITS, formula=formula, worked=f"({shown}) ÷ {grouped(self.weights)} = {BITS.show(value)}",
                      inputs=made_of(weights))

    @property
    def bytes_per_block(self) -> Result:
        value = self.total_bits / 8
        return (term(field(self, "total_bits"), grouped(self.total_bits)) / term(8)).result(
            Unit("B", 1, "B", 0), "bits ÷ 8", shown=f"{grouped(value)} B")

    @property
    def overhead(self) -> Result:
        """What the shared fields add to the element's own width, as a share of it."""
        element_bits = next(p.bits for p in self.parts if p.count == self.weights)
        per_weight = self.bits_per_weight
        return (term(per_weight, plain(per_weight.value)) / term(element_bits, str(element_bits)) - term(1)).result(
            RELATIVE, "bits per weight ÷ element bits − 1")


BLOCKS: dict[str, BlockFormat] = {b.key: b for b in (
    BlockFormat("int4_g128", "int4, group of 128, 16-bit scale and zero", 128,
                (Part("4-bit weights", 128, 4), Part("fp16 scale", 1, 16), Part("16-bit zero point", 1, 16)),
                GROUPED_INT4, "int4"),
    BlockFormat("awq", "int4, group of 128, as AutoAWQ packs it", 128,
                (Part("4-bit weights", 128, 4), Part("fp16 scale", 1, 16), Part("4-bit zero point", 1, 4)),
                GROUPED_INT4, "int4"),
    BlockFormat("q4_0", "GGUF Q4_0", 32, (Part("4-bit weights", 32, 4), Part("fp16 scale d", 1, 16)), GGML, "int4"),
    BlockFormat("q4_k", "GGUF Q4_K", 256,
                (Part("4-bit weights, qs", 256, 4), Part("fp16 d and dmin", 2, 16),
                 Part("6-bit scales and mins, packed in 12 bytes", 12, 8)), GGML, "int4"),
    BlockFormat("q6_k", "GGUF Q6_K", 256,
                (Part("6-bit weights, ql and qh", 256, 6), Part("int8 scales", 16, 8), Part("fp16 d", 1, 16)), GGML, "int6"),
    BlockFormat("q8_0", "GGUF Q8_0", 32, (Part("int8 weights", 32, 8), Part("fp16 scale d", 1, 16)), GGML, "int8"),
    BlockFormat("mxfp4", "MXFP4", 32, (Part("E2M1 elements", 32, 4), Part("E8M0 scale", 1, 8)), OCP_MX, "fp4 E2M1"),
    BlockFormat("nvfp4", "NVFP4", 16, (Part("E2M1 elements", 16, 4), Part("E4M3 scale", 1, 8)), NVFP4, "fp4 E2M1"),
)}
