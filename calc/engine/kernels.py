"""What vLLM's kernels achieve, as measured: the share of the roofline each kind of kernel reached on
a real card. calc times a kernel as its roofline (bytes at the datasheet's bandwidth, or operations at
its dense peak, whichever is longer) divided by that share, so the datasheet and the measurement each
stay visible in the arithmetic.

The measurements are NVIDIA's aiconfigurator-core tables (calc.engine.measured_kernels), taken on
each card with a vLLM release's own kernels on Llama 3.1 8B's layer shapes:

- matrix multiplies: the share of the roofline at each token count, from one token (reading the
  weights, about four fifths of the bandwidth) through the ridge (where neither limit is reached)
  to thousands (about four fifths of the dense peak);
- decode attention: a fixed time per call plus the cache's bytes at a measured share of bandwidth,
  both read off the table (the smallest call; the largest batch);
- prefill attention: the causal operations at a measured share of the dense peak that grows with
  the prompt's length, never less than the decode floor per call.

A card without its own tables borrows another's (`DONORS`), its matrix-multiply curve moved along
the token axis by the two cards' ridges, and says so wherever it is priced. Other shapes and
precisions reuse the 8B's curves at the same distance from their own ridge: below it a matrix
multiply reads its weights at the measured share whatever their shape, above it the large shapes
of every model calc knows run near the measured plateau.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache

from ..specs.cards import CARDS, Card
from ..specs.models import LLAMA_3_1_8B
from ..specs.precision import BF16, FP8, Precision
from ..core.arith import made_of, term
from ..core.units import MICROSECONDS, MS, PERCENT, TFLOPS, Result, grouped
from . import measured_kernels

SOURCE = (f"NVIDIA aiconfigurator-core {measured_kernels.PACKAGE.split()[-1]} (Apache-2.0), "
          "systems/data/<card>/{gemm,attention}/vllm/<release>/: kernel times measured on the card with that "
          "vLLM release's kernels; tools/engine_kernels.py keeps the rows calc uses")
MEASURED: dict[str, Card] = {key: CARDS[key] for key in measured_kernels.CARDS}  # the cards with tables of their own
# A card without tables of its own, and the measured card nearest to it in kind.
DONORS: dict[str, str] = {"h100-pcie": "h100-sxm", "a100-40": "a100-80", "l4": "l40s", "mi300x": "h100-sxm"}
SHAPE = LLAMA_3_1_8B  # the layer shapes every table was measured on


def card_key(card: Card) -> str:
    return next((key for key, known in CARDS.items() if known.name == card.name), "")


def layer_gemm_shapes(model=SHAPE) -> tuple[tuple[int, int], ...]:
    """(N, K) of one layer's four matrix multiplies: qkv, o, gate_up, down."""
    q, kv = model.num_attention_heads * model.head_dim, model.num_key_value_heads * model.head_dim
    hidden, intermediate = model.hidden_size, model.intermediate_size
    return ((q + 2 * kv, hidden), (hidden, q), (2 * intermediate, hidden), (hidden, intermediate))


def gemm_roofline(card: Card, tokens: int, shapes: tuple[tuple[int, int], ...], precision: Precision = BF16) -> float:
    """Seconds for `tokens` tokens through matrices of these shapes, weights in `precision`, at the
    datasheet's rates: the longer of reading weights, inputs and outputs (bf16), and doing
    2 × tokens × N × K operations at the peak those weights multiply at."""
    weights = sum(n * k for n, k in shapes) * precision.bytes
    activations = tokens * sum(n + k for n, k in shapes) * BF16.bytes
    ops = 2 * tokens * sum(n * k for n, k in shapes)
    return max((weights + activations) / card.bandwidth.value, ops / peak_compute(card, precision).value)


@lru_cache(maxsize=512)
def peak_compute(card: Card, precision: Precision) -> Result:
    """The dense tensor peak the matrix multiplies run at. fp8 checkpoints of this family quantise
    activations too (W8A8), so they use fp8 tensor cores where the card has them; int4 (AWQ, GPTQ)
    is weight-only and multiplies in bf16."""
    if precision == FP8 and card.fp8_dense_tflops > 0:
        return Result(card.fp8_dense.value, TFLOPS, formula="dense fp8 tensor peak (datasheet)",
                      worked=f"fp8 weights and activations on fp8 tensor cores: {card.fp8_dense}",
                      inputs=made_of(card.fp8_dense))
    why = "no fp8 tensor cores, so fp8 weights multiply in bf16" if precision == FP8 else f"{precision.name} weights multiply in bf16"
    return Result(card.bf16_dense.value, TFLOPS, formula="dense bf16 tensor peak (datasheet)",
                  worked=f"{why}: {card.bf16_dense}" if precision.quantised else f"{card.bf16_dense}",
                  inputs=made_of(card.bf16_dense))


def ridge_tokens(card: Card, precision: Precision) -> float:
    """Tokens per step at which a matrix multiply's operations take as long as reading its weights at
    the datasheet's rates: peak × bytes per weight ÷ (2 × bandwidth)."""
    return peak_compute(card, precision).value * precision.bytes / (2 * card.bandwidth.value)


@dataclass(frozen=True)
class Measured:
    """One card's measured kernels, or a donor's, turned into shares of the roofline."""

    card: Card
    measured_on: Card
    release: str
    gemm: tuple[tuple[int, float], ...]
    decode_floor_s: float
    decode_share: float
    prefill: tuple[tuple[int, float], ...]
    prefill_shape_ops: tuple[tuple[int, float], ...]
    decode_kernel: str
    gemm_fp8: tuple[tuple[int, float], ...] = ()
    fp8_kernel: str = ""

    @property
    def own(self) -> bool:
        return self.card.name == self.measured_on.name

    @property
    def provenance(self) -> str:
        """Which of this card's efficiencies are its own measurements, in a sentence."""
        where = (f"vLLM {self.release}'s kernels measured on the {self.measured_on.name}")
        fp8 = (f"; fp8 matrix multiplies are {self.fp8_kernel}'s own" if self.gemm_fp8 else
               "; no fp8 matrix multiply was timed there, so fp8 weights take the bf16 curve moved to their ridge")
        if self.own:
            return f"{where} ({SOURCE.split(' (')[0]}){fp8}"
        return (f"none measured on the {self.card.name}: {where} are carried over, the matrix multiplies' curve "
                f"moved to this card's ridge{fp8}")


@lru_cache(maxsize=None)
def measured(card: Card) -> Measured:
    """The measured shares for `card`: its own tables, or its donor's (the H100 SXM's for a card calc
    has no neighbour for)."""
    key = card_key(card)
    donor_key = key if key in MEASURED else DONORS.get(key, "h100-sxm")
    donor = MEASURED[donor_key]
    rows = measured_kernels.CARDS[donor_key]
    shapes = layer_gemm_shapes()
    gemm = [(m, gemm_roofline(donor, m, shapes) / t) for m, t in zip(measured_kernels.TOKENS, rows["gemm"])]
    fp8 = [(m, gemm_roofline(donor, m, shapes, FP8) / t) for m, t in zip(measured_kernels.TOKENS, rows["gemm_fp8"])]
    floor = rows["smallest"]
    largest_batch, largest_time = rows["decode"][-1]
    cache_bytes = largest_batch * measured_kernels.CACHED * _cache_bytes_per_token_per_layer()
    share = cache_bytes / ((largest_time - floor) * donor.bandwidth.value)
    per_position = _attention_ops_per_position_per_layer()
    prefill_ops = [(s, per_position * s * (s + 1) / 2) for s, _ in rows["prefill"]]
    prefill = [(s, ops / (t * donor.bf16_dense.value)) for (s, t), (_, ops) in zip(rows["prefill"], prefill_ops)]
    return Measured(card=card, measured_on=donor, release=rows["vllm"], gemm=tuple(gemm), decode_floor_s=floor,
                    decode_share=share, prefill=tuple(prefill), prefill_shape_ops=tuple(prefill_ops),
                    decode_kernel=rows["decode_kernel"], gemm_fp8=tuple(fp8), fp8_kernel=rows["gemm_fp8_kernel"])


def _cache_bytes_per_token_per_layer() -> int:
    return 2 * SHAPE.num_key_value_heads * SHAPE.head_dim * BF16.bytes


def _attention_ops_per_position_per_layer() -> int:
    return 4 * SHAPE.num_attention_heads * SHAPE.head_dim


class LogCurve:
    """Measured (size, share) points, read linearly in log₂ of the size between them; the ends hold
    beyond the table."""

    def __init__(self, points: tuple[tuple[int, float], ...]):
        self.sizes = [x for x, _ in points]
        self.logs = [math.log2(x) for x in self.sizes]
        self.shares = [y for _, y in points]

    def __call__(self, x: float) -> float:
        sizes, shares = self.sizes, self.shares
        if x <= sizes[0]:
            return shares[0]
        i = bisect_left(sizes, x)
        if i == len(sizes):
            return shares[-1]
        weight = (math.log2(x) - self.logs[i - 1]) / (self.logs[i] - self.logs[i - 1])
        return shares[i - 1] + weight * (shares[i] - shares[i - 1])


def _fp8_measured(card: Card, precision: Precision) -> bool:
    """Whether fp8 weights on this card run on an fp8 matrix multiply that was timed: the card (or its
    donor) has the table and fp8 tensor cores to run it on."""
    return precision == FP8 and card.fp8_dense_tflops > 0 and bool(measured(card).gemm_fp8)


@lru_cache(maxsize=None)
def gemm_curve(card: Card, precision: Precision = BF16) -> LogCurve:
    """The measured shares of the roofline against tokens: the fp8 kernel's for fp8 weights where it
    was timed, the bf16 kernel's otherwise."""
    table = measured(card)
    return LogCurve(table.gemm_fp8 if _fp8_measured(card, precision) else table.gemm)


@lru_cache(maxsize=None)
def prefill_curve(card: Card) -> LogCurve:
    return LogCurve(measured(card).prefill)


def _curve_precision(card: Card, precision: Precision) -> Precision:
    """The precision the curve read for `precision` was measured in."""
    return FP8 if _fp8_measured(card, precision) else BF16


@lru_cache(maxsize=512)
def ridge_ratio(card: Card, precision: Precision) -> float:
    """The measured card's ridge in tokens, for the curve's precision, ÷ this card's, for this precision."""
    return ridge_tokens(measured(card).measured_on, _curve_precision(card, precision)) / ridge_tokens(card, precision)


def gemm_share(card: Card, precision: Precision, tokens: float) -> float:
    """gemm_efficiency's value alone, for the simulation's inner loop."""
    return gemm_curve(card, precision)(tokens * ridge_ratio(card, precision))


def prefill_share_value(card: Card, tokens: float) -> float:
    return prefill_curve(card)(max(tokens, 1))


@lru_cache(maxsize=8192)
def gemm_efficiency(card: Card, precision: Precision, tokens: int) -> Result:
    """The share of the roofline a matrix multiply of `tokens` tokens reaches on `card`: measured at the
    same distance from the ridge (tokens × the measured card's ridge ÷ this one's)."""
    table = measured(card)
    curve = _curve_precision(card, precision)
    here = ridge_tokens(card, precision)
    there = ridge_tokens(table.measured_on, curve)
    at = tokens * there / here
    value = gemm_share(card, precision, tokens)
    where = (f"at {grouped(tokens)} {'token' if tokens == 1 else 'tokens'}" if abs(at - tokens) < 1e-9 else
             f"at {grouped(tokens)} {'token' if tokens == 1 else 'tokens'}, {grouped(at)} on the {table.measured_on.name}'s ridge "
             f"({grouped(here)} tokens here, {grouped(there)} there)")
    kernel = f"{table.fp8_kernel}, fp8" if curve == FP8 else "bf16"
    return Result(value, PERCENT, formula="the measured share of the roofline, interpolated in log₂ tokens",
                  worked=f"{PERCENT.show(value)} {where}, measured with vLLM {table.release}'s {kernel} kernels")


def decode_floor(card: Card) -> Result:
    table = measured(card)
    return Result(table.decode_floor_s, MICROSECONDS, formula="the smallest decode-attention call, measured",
                  worked=(f"one sequence of {measured_kernels.SMALLEST} tokens: {MICROSECONDS.show(table.decode_floor_s)} "
                          f"on the {table.measured_on.name} ({table.decode_kernel})"))


def decode_share(card: Card) -> Result:
    table = measured(card)
    batch, seconds = measured_kernels.CARDS[card_key(table.measured_on)]["decode"][-1]
    cache = batch * measured_kernels.CACHED * _cache_bytes_per_token_per_layer()
    return Result(table.decode_share, PERCENT, formula="cache bytes ÷ ((measured time − fixed time) × bandwidth)",
                  worked=(f"{grouped(cache)} B ÷ (({MICROSECONDS.precise(seconds)} − "
                          f"{MICROSECONDS.precise(table.decode_floor_s)}) × {table.measured_on.bandwidth}) = "
                          f"{PERCENT.show(table.decode_share)}; {grouped(batch)} sequences of "
                          f"{grouped(measured_kernels.CACHED)} tokens on the {table.measured_on.name}"),
                  # the share is the table's own, worked out when the table was kept: the line restates it
                  inputs=made_of(decode_floor(card), table.measured_on.bandwidth))


@lru_cache(maxsize=4096)
def prefill_share(card: Card, tokens: int) -> Result:
    """The share of the dense peak causal prefill attention reached over a prompt of `tokens` tokens
    (a call's fixed time included: below the shortest prompt measured a call takes the decode floor)."""
    table = measured(card)
    value = prefill_share_value(card, tokens)
    return Result(value, PERCENT, formula="the measured share of the dense peak, interpolated in log₂ tokens",
                  worked=(f"{PERCENT.show(value)} at {grouped(tokens)} tokens, measured on the {table.measured_on.name} "
                          f"with vLLM {table.release}'s kernels"))


def all_reduce_rows(card: Card, gpus: int) -> tuple[tuple[int, float], ...]:
    """vLLM's all-reduce captured in a CUDA graph, as measured on this card at this many GPUs:
    ((bf16 elements, seconds), …), or () where the card has no such table. No card borrows another's:
    an all-reduce runs on the card's own link."""
    return measured_kernels.CARDS.get(card_key(card), {}).get("all_reduce", {}).get(gpus, ())


def all_reduce_release(card: Card) -> str:
    return measured_kernels.CARDS.get(card_key(card), {}).get("all_reduce_vllm", "")


def all_reduce_time(card: Card, gpus: int, elements: int) -> Result:
    """One all-reduce of `elements` bf16 values on `gpus` of this card, as measured: read between the
    two message sizes either side in log–log (time grows as a power of the size between them), the
    smallest message's time below the table, and in proportion to the size above it."""
    rows = all_reduce_rows(card, gpus)
    sizes = [n for n, _ in rows]
    release = all_reduce_release(card)
    source = f"vLLM {release}'s all-reduce in a CUDA graph, measured on {gpus} × {card.name}"
    if elements <= sizes[0]:
        value = rows[0][1]
        worked = f"{MICROSECONDS.precise(value)} for the smallest message timed, {grouped(sizes[0])} elements ({source})"
    elif elements >= sizes[-1]:
        scaled = term(rows[-1][1], MICROSECONDS.precise(rows[-1][1])) * term(elements) / term(sizes[-1], f"{grouped(sizes[-1])} elements")
        value = scaled.value
        return scaled.result(MICROSECONDS if value < 0.001 else MS, "the measured all-reduce at this message size",
                             shown=f"{MICROSECONDS.precise(value)}, past the largest message timed ({source})")
    else:
        i = bisect_left(sizes, elements)
        (n0, t0), (n1, t1) = rows[i - 1], rows[i]
        if elements == n1:
            value, worked = t1, f"{MICROSECONDS.precise(t1)} at {grouped(n1)} elements ({source})"
        else:
            weight = math.log(elements / n0) / math.log(n1 / n0)
            value = t0 * (t1 / t0) ** weight
            worked = (f"{MICROSECONDS.precise(value)} at {grouped(elements)} elements, read in log–log between "
                      f"{MICROSECONDS.precise(t0)} at {grouped(n0)} and {MICROSECONDS.precise(t1)} at {grouped(n1)} "
                      f"({source})")
    return Result(value, MICROSECONDS if value < 0.001 else MS,
                  formula="the measured all-reduce at this message size", worked=worked)
