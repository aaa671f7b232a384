"""What one decode step must read from memory, and how much of it is cache."""
from __future__ import annotations

from functools import lru_cache

from dataclasses import dataclass

from .anatomy import count_parameters
from .kvshape import bytes_per_token
from ..specs.models import Model
from ..specs.precision import BF16, Precision
from .weights import weight_bytes
from ..specs.cards import Card
from ..core.units import GB_MOVED, MS, PERCENT, RATIO, Result, grouped


@dataclass(frozen=True)
class DecodeRead:
    """Bytes moved by one decode step: every weight once, plus every active sequence's cache."""

    batch: int
    tokens: int
    weights: Result
    cache: Result

    @property
    def total(self) -> Result:
        value = self.weights.value + self.cache.value
        return Result(value, GB_MOVED, formula="weights + cache",
                      worked=f"{self.weights} + {self.cache} = {GB_MOVED.show(value)}")

    @property
    def cache_share(self) -> Result:
        value = self.cache.value / self.total.value
        return Result(value, PERCENT, formula="cache ÷ (weights + cache)",
                      worked=f"{self.cache.operand} ÷ ({self.weights.operand} + {self.cache.operand}) = {PERCENT.show(value)}")

    @property
    def weight_share(self) -> Result:
        value = self.weights.value / self.total.value
        return Result(value, PERCENT, formula="weights ÷ (weights + cache)",
                      worked=f"{self.weights.operand} ÷ {self.total.operand} = {PERCENT.show(value)}")


@lru_cache(maxsize=512)
def weights_read(model: Model, precision: Precision) -> Result:
    """Weight bytes one forward step reads: every matrix it multiplies by. An untied embedding
    table is gathered, one row per token, not streamed; a tied one is read whole as the LM head."""
    held = weight_bytes(model, precision).value
    if model.tie_word_embeddings:
        return Result(held, GB_MOVED, formula="weights held (the tied embedding is read whole as the LM head)",
                      worked=f"{grouped(held)} B = {GB_MOVED.show(held)}")
    table = count_parameters(model).embedding * (BF16.bytes if precision.quantised else precision.bytes)
    value = held - table
    return Result(value, GB_MOVED, formula="weights held − the embedding table, which is gathered, not read",
                  worked=f"{grouped(held)} B − {grouped(table)} B = {grouped(value)} B = {GB_MOVED.show(value)}")


@lru_cache(maxsize=512)
def decode_read(model: Model, weights: Precision, kv: Precision, batch: int, tokens: int) -> DecodeRead:
    """One decode step at `batch` sequences of `tokens` tokens each."""
    per_token = bytes_per_token(model, kv)
    cache = batch * tokens * per_token.value
    return DecodeRead(
        batch=batch,
        tokens=tokens,
        weights=weights_read(model, weights),
        cache=Result(cache, GB_MOVED, formula="batch × tokens × per-token cache",
                     worked=f"{grouped(batch)} × {grouped(tokens)} × {grouped(per_token.value)} B = {GB_MOVED.show(cache)}"),
    )


def step_floor(read: DecodeRead, card: Card) -> Result:
    """The shortest a decode step can take: its bytes at the card's full memory bandwidth."""
    seconds = read.total.value / card.bandwidth.value
    return Result(seconds, MS, formula="bytes read per step ÷ HBM bandwidth",
                  worked=f"{read.total.operand} ÷ {card.bandwidth} = {MS.show(seconds)}")


def read_growth(longer: DecodeRead, shorter: DecodeRead) -> Result:
    """How much more a step reads at one length than at another: the floor on ITL moves with it."""
    value = longer.total.value / shorter.total.value
    return Result(value, RATIO, formula="bytes read per step, longer ÷ shorter",
                  worked=f"{longer.total.operand} ÷ {shorter.total.operand} = {RATIO.show(value)}")


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
