"""What one decode step must read from memory, and how much of it is cache."""
from __future__ import annotations

from functools import cached_property, lru_cache

from dataclasses import dataclass

from .anatomy import count_parameters
from .kvshape import bytes_per_token
from ..specs.models import Model
from ..specs.precision import BF16, Precision
from .weights import weight_bytes
from ..specs.cards import Card
from ..core.arith import term
from ..core.units import GB_MOVED, MS, PERCENT, RATIO, Result, grouped


@dataclass(frozen=True)
class DecodeRead:
    """Bytes moved by one decode step: every weight once, plus every active sequence's cache."""

    batch: int
    tokens: int
    weights: Result
    cache: Result

    @cached_property
    def total(self) -> Result:
        return (term(self.weights, str(self.weights)) + term(self.cache, str(self.cache))).result(GB_MOVED, "weights + cache")

    @property
    def cache_share(self) -> Result:
        cache = term(self.cache)
        return (cache / (term(self.weights) + cache)).result(PERCENT, "cache ÷ (weights + cache)")

    @property
    def weight_share(self) -> Result:
        return (term(self.weights) / term(self.total)).result(PERCENT, "weights ÷ (weights + cache)")


@lru_cache(maxsize=512)
def weights_read(model: Model, precision: Precision) -> Result:
    """Weight bytes one forward step reads: every matrix it multiplies by. An untied embedding
    table is gathered, one row per token, not streamed; a tied one is read whole as the LM head."""
    weights = weight_bytes(model, precision)
    held = term(weights, f"{grouped(weights.value)} B")
    if model.tie_word_embeddings:
        return held.result(GB_MOVED, "weights held (the tied embedding is read whole as the LM head)")
    table = count_parameters(model).embedding * (BF16.bytes if precision.quantised else precision.bytes)
    value = weights.value - table
    return (held - term(table, f"{grouped(table)} B")).result(
        GB_MOVED, "weights held − the embedding table, which is gathered, not read",
        shown=f"{grouped(value)} B = {GB_MOVED.show(value)}")


@lru_cache(maxsize=512)
def decode_read(model: Model, weights: Precision, kv: Precision, batch: int, tokens: int) -> DecodeRead:
    """One decode step at `batch` sequences of `tokens` tokens each."""
    per_token = bytes_per_token(model, kv)
    return DecodeRead(
        batch=batch,
        tokens=tokens,
        weights=weights_read(model, weights),
        cache=(term(batch) * term(tokens) * term(per_token, f"{grouped(per_token.value)} B")).result(
            GB_MOVED, "batch × tokens × per-token cache"),
    )


def step_floor(read: DecodeRead, card: Card) -> Result:
    """The shortest a decode step can take: its bytes at the card's full memory bandwidth."""
    return (term(read.total) / term(card.bandwidth, str(card.bandwidth))).result(MS, "bytes read per step ÷ HBM bandwidth")


def read_growth(longer: DecodeRead, shorter: DecodeRead) -> Result:
    """How much more a step reads at one length than at another: the floor on ITL moves with it."""
    return (term(longer.total) / term(shorter.total)).result(RATIO, "bytes read per step, longer ÷ shorter")


CURVE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
CURVE_LENGTHS = (2_048, 8_192, 32_768)


def cache_share_curves(model: Model, weights: Precision, kv: Precision) -> list[dict]:
    """The cache's share of each step's read, in percent, against batch, at three lengths.

    A sliding window caps what each sequence holds, so a length past the window reads no more.
    """
    curves = []
    for tokens in CURVE_LENGTHS:
        held = model.tokens_cached(tokens)
        shares = [decode_read(model, weights, kv, b, held).cache_share.value for b in CURVE_BATCHES]
        curves.append({"name": f"{grouped(tokens)} tokens", "x": list(CURVE_BATCHES),
                       "y": [100 * share for share in shares]})
    return curves


def chart_rows(curves: list[dict], decimals: int, suffix: str) -> list[list[str]]:
    """The numbers behind a chart, one row per x: what its data table prints, rounded once."""
    return [[grouped(x)] + [f"{curve['y'][i]:.{decimals}f}{suffix}" for curve in curves]
            for i, x in enumerate(curves[0]["x"])]
