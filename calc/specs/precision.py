"""Number formats, by the bytes each stored value really costs."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Precision:
    """A storage format. `bits` is the effective width: scales and zero-points included."""

    name: str
    bits: float
    note: str

    @property
    def quantised(self) -> bool:
        return self.bits < BF16_BITS

    @property
    def bytes(self) -> float:
        return self.bits / 8


BF16_BITS = 16
BF16 = Precision("bf16", BF16_BITS, "1 sign, 8 exponent, 7 mantissa bits")
FP8 = Precision("fp8", 8, "e4m3: 1 sign, 4 exponent, 3 mantissa bits")
INT4 = Precision("int4", 4.25, "4-bit weights with a 16-bit scale and zero-point shared by each group of 128")

PRECISIONS: dict[str, Precision] = {p.name: p for p in (BF16, FP8, INT4)}
KV_PRECISIONS: dict[str, Precision] = {p.name: p for p in (BF16, FP8)}
