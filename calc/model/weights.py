"""The memory a model's weights hold in a storage format."""
from __future__ import annotations

from functools import lru_cache

from .anatomy import count_parameters
from ..specs.models import Model
from ..specs.precision import BF16, Precision
from ..core.arith import made_of, term
from ..core.units import GIB_HELD, Result, grouped, plain

QUANTISED_WEIGHTS_SOURCE = (
    "Neural Magic's FP8 checkpoints of Llama 3.1 (huggingface.co/neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8; model "
    "card: only the linear operators within transformer blocks are quantised); AWQ and GPTQ int4 checkpoints likewise "
    "leave the embedding and LM head in 16 bits")


@lru_cache(maxsize=512)
def weight_bytes(model: Model, precision: Precision) -> Result:
    """Memory the weights hold. A quantised checkpoint converts the blocks' matrices only; the
    embedding table, the LM head and the norms stay in bf16 (QUANTISED_WEIGHTS_SOURCE)."""
    count = count_parameters(model)
    total = count.total.value
    if not precision.quantised:
        expr = term(count.total, grouped(total)) * term(precision.bytes, f"{plain(precision.bytes)} B")
        return expr.result(GIB_HELD, "parameters × bytes per parameter",
                           shown=f"{grouped(expr.value)} B = {GIB_HELD.show(expr.value)}")
    converted, kept = count.block_matrices, total - count.block_matrices
    value = converted * precision.bytes + kept * BF16.bytes
    return Result(
        value,
        GIB_HELD,
        formula=f"block matrices × {precision.name} bytes + embedding, head and norms × bf16 bytes",
        worked=(f"{grouped(converted)} × {plain(precision.bytes)} B + {grouped(kept)} × {plain(BF16.bytes)} B = "
                f"{grouped(value)} B = {GIB_HELD.show(value)}"),
        inputs=made_of(count.total),
    )
