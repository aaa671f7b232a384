"""Number formats, by the bytes each stored value really costs."""
from __future__ import annotations

from dataclasses import dataclass

from .anatomy import count_parameters
from .models import Model
from .units import GIB_HELD, Result, grouped, plain


@dataclass(frozen=True)
class Precision:
    """A storage format. `bits` is the effective width: scales and zero-points included."""

    name: str
    bits: float
    note: str

    @property
    def bytes(self) -> float:
        return self.bits / 8


BF16 = Precision("bf16", 16, "1 sign, 8 exponent, 7 mantissa bits")
FP8 = Precision("fp8", 8, "e4m3: 1 sign, 4 exponent, 3 mantissa bits")
INT4 = Precision("int4", 4.25, "4-bit weights with a 16-bit scale and zero-point shared by each group of 128")

PRECISIONS: dict[str, Precision] = {p.name: p for p in (BF16, FP8, INT4)}
KV_PRECISIONS: dict[str, Precision] = {p.name: p for p in (BF16, FP8)}


def weight_bytes(model: Model, precision: Precision) -> Result:
    """Memory the weights hold: parameters × bytes per parameter."""
    params = count_parameters(model).total.value
    value = params * precision.bytes
    return Result(
        value,
        GIB_HELD,
        formula="parameters × bytes per parameter",
        worked=f"{grouped(params)} × {plain(precision.bytes)} B = {grouped(value)} B = {GIB_HELD.show(value)}",
    )
