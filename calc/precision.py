"""Number formats, by the bytes each stored value really costs."""
from __future__ import annotations

from functools import lru_cache

from dataclasses import dataclass

from .anatomy import count_parameters
from .models import Model
from .units import GIB_HELD, Result, grouped, plain


QUANTISED_WEIGHTS_SOURCE = (
    "Neural Magic's FP8 checkpoints of Llama 3.1 (huggingface.co/neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8; model "
    "card: only the linear operators within transformer blocks are quantised); AWQ and GPTQ int4 checkpoints likewise "
    "leave the embedding and LM head in 16 bits")


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


@lru_cache(maxsize=512)
def weight_bytes(model: Model, precision: Precision) -> Result:
    """Memory the weights hold. A quantised checkpoint converts the blocks' matrices only; the
    embedding table, the LM head and the norms stay in bf16 (QUANTISED_WEIGHTS_SOURCE)."""
    count = count_parameters(model)
    total = count.total.value
    if not precision.quantised:
        value = total * precision.bytes
        return Result(value, GIB_HELD, formula="parameters × bytes per parameter",
                      worked=f"{grouped(total)} × {plain(precision.bytes)} B = {grouped(value)} B = {GIB_HELD.show(value)}")
    converted, kept = count.block_matrices, total - count.block_matrices
    value = converted * precision.bytes + kept * BF16.bytes
    return Result(
        value,
        GIB_HELD,
        formula=f"block matrices × {precision.name} bytes + embedding, head and norms × bf16 bytes",
        worked=(f"{grouped(converted)} × {plain(precision.bytes)} B + {grouped(kept)} × {plain(BF16.bytes)} B = "
                f"{grouped(value)} B = {GIB_HELD.show(value)}"),
    )

