"""The time model as the documents use it: prefill, a decode step, and what they make of TTFT, ITL
and throughput, for any model × card × precision calc knows.

Every time comes from the engine layer (calc.engine.steptime): each kind of kernel is priced as its
roofline divided by the share of it vLLM's kernels were measured to reach on the card, plus a fixed
cost per step. The documents' intuitions are read off the same measurements: the share of the dense
peak a long step's matrix multiplies reach (`compute_share`), the share of bandwidth a one-token
step's reach while they read the weights (`bandwidth_share`), and the ridge between them.
"""
from __future__ import annotations

from functools import cached_property, lru_cache

import math
from dataclasses import dataclass

from . import kvcache
from ..model import operations
from ..specs.cards import Card
from . import kernels, steptime
from .kernels import peak_compute
from .steptime import Group
from ..specs.models import Model
from ..model.roofline import DecodeRead, decode_read, weights_read
from ..specs.stack import Efficiency, Stack
from ..core.arith import Expr, ceil_div, field, made_of, term, total
from ..core.units import (COUNT, FLOP_PER_BYTE, FRACTION, GFLOP, MS, PERCENT, SECONDS, TFLOPS, TOKENS, TOKENS_PER_S,
    Result, grouped)

__all__ = ["peak_compute"]  # re-exported: the documents price compute with it


def _difference_places(first: float, second: float, unit) -> int:
    """Places enough that a small difference of large numbers can still be redone by hand."""
    scaled = abs((first - second) / unit.scale)
    places = unit.decimals
    if scaled:
        places = max(places, min(12, math.ceil(-math.log10(scaled * 1e-4))))
    return places


def difference(first: float, second: float, unit) -> str:
    """first − second = result, with the operands shown to enough places that a small difference of
    large numbers can still be redone by hand."""
    result = first - second
    places = _difference_places(first, second, unit)
    return f"{unit.show(first, places)} − {unit.show(second, places)} = {unit.show(result)}"


def subtracted(first: Result, second: Result) -> Expr:
    """first − second, as `difference` shows it, recording both."""
    places = _difference_places(first.value, second.value, first.unit)
    return term(first, first.unit.show(first.value, places)) - term(second, first.unit.show(second.value, places))


def _calibration(efficiency: Efficiency, name: str) -> Result:
    """The reader's calibration of a measured share, as the field of the stack it was read off."""
    return field(efficiency, name, FRACTION, f"your {name} calibration")


def ridge_point(card: Card, precision) -> Result:
    """Operations per byte at which the peak compute and the bandwidth take equal time."""
    peak = peak_compute(card, precision)
    return (term(peak, str(peak)) / term(card.bandwidth, str(card.bandwidth))).result(
        FLOP_PER_BYTE, "dense peak ÷ memory bandwidth")


@dataclass(frozen=True)
class Timed:
    """What the time model reads of a stack. Prefill and a decode step do not depend on the traffic,
    the prices or the engine's flags, so they are memoised by this part alone: a chart over the
    traffic (document 14's fleet against request rate) reuses each step instead of deriving it again
    at every rate."""

    model: Model
    card: Card
    weight_precision: object
    kv_precision: object
    efficiency: Efficiency

    @property
    def hardware(self) -> steptime.Hardware:
        return steptime.Hardware(self.card, self.weight_precision, self.kv_precision,
                                 self.efficiency.compute, self.efficiency.bandwidth)


def timed(stack: Stack) -> Timed:
    return Timed(stack.model, stack.card, stack.weight_precision, stack.kv_precision, stack.efficiency)


@lru_cache(maxsize=512)
def _compute_share(stack: Timed, tokens: int) -> Result:
    share = kernels.gemm_efficiency(stack.card, stack.weight_precision, tokens)
    if stack.efficiency.compute == 1:
        return share
    calibration = _calibration(stack.efficiency, "compute")
    return (term(share) * term(calibration, f"{calibration.value:g}")).result(PERCENT, "measured share × your calibration")


def compute_share(stack: Stack) -> Result:
    """The share of the dense peak the matrix multiplies reach in a step of the typical prompt's
    tokens: measured, and as close to a long step's plateau as the measurements go."""
    return _compute_share(timed(stack), stack.traffic.prompt_p50)


def bandwidth_share(stack: Stack) -> Result:
    """The share of bandwidth the matrix multiplies reach reading the weights for one token."""
    t = timed(stack)
    share = kernels.gemm_efficiency(t.card, t.weight_precision, 1)
    if t.efficiency.bandwidth == 1:
        return share
    calibration = _calibration(t.efficiency, "bandwidth")
    return (term(share) * term(calibration, f"{calibration.value:g}")).result(PERCENT, "measured share × your calibration")


def achieved(peak: Result, share: Result, what: str) -> Result:
    # share × peak: the same product as peak × share, bit for bit (a float product commutes)
    return (term(share) * term(peak, str(peak))).result(peak.unit, f"{what} × peak")


def achieved_compute(stack: Stack) -> Result:
    return achieved(peak_compute(stack.card, stack.weight_precision), compute_share(stack), "compute share")


def achieved_bandwidth(stack: Stack) -> Result:
    return achieved(stack.card.bandwidth, bandwidth_share(stack), "bandwidth share")


@lru_cache(maxsize=512)
def effective_ridge(stack: Stack) -> Result:
    """The ridge as the kernels see it: achieved compute ÷ achieved bandwidth."""
    compute, bandwidth = achieved_compute(stack), achieved_bandwidth(stack)
    return (term(compute) / term(bandwidth)).result(FLOP_PER_BYTE, "compute share × peak ÷ (bandwidth share × bandwidth)")


@dataclass(frozen=True)
class Step:
    """One engine step's kernels and its fixed cost; its time is their sum."""

    groups: tuple[Group, ...]
    overhead: Result

    @cached_property
    def kernels(self) -> Result:
        return total(term(g.time, f"{g.time.operand} {g.name}") for g in self.groups).result(MS, "the kernels' times added")

    @cached_property
    def time(self) -> Result:
        # (g₁ + g₂ + …) + fixed cost: the kernels' sum, then the overhead, as the value always was
        return (total(term(g.time) for g in self.groups) + term(self.overhead)).result(MS, "kernels + the step's fixed cost")

    def group(self, name: str) -> Group:
        return next(g for g in self.groups if g.name.startswith(name))

    @property
    def attention(self) -> Group:
        """The prompt's causal attention (document 05 shows its fixed cost a layer)."""
        return self.group("prefill attention")


def prefill_step(stack: Stack, prompt: int) -> Step:
    """One prompt prefilled alone, in one step: its block matrices at `prompt` tokens, the LM head for
    its last position, causal attention, the elementwise work and the step's fixed cost."""
    return _prompt_step(timed(stack), prompt, 0)


def prefill_after(stack: Stack, prompt: int, cached: int) -> Step:
    """A prompt whose first `cached` tokens were found in the prefix cache: the rest prefilled in one
    step, attending to the whole prompt."""
    return _prompt_step(timed(stack), prompt - cached, cached)


@lru_cache(maxsize=2048)
def _prompt_step(stack: Timed, tokens: int, cached: int) -> Step:
    hw, model = stack.hardware, stack.model
    return Step((steptime.embedding(hw, model, tokens), steptime.matrices(hw, model, tokens),
                 steptime.prefill_attention(hw, model, ((tokens, cached),)),
                 steptime.elementwise(hw, model, tokens, with_embedding=False), steptime.head(hw, model, 1)),
                steptime.overhead())


def prefill_time(stack: Stack, prompt: int) -> Result:
    """A prompt prefilled alone: its step's kernels and the step's fixed cost."""
    return prefill_step(stack, prompt).time


def _seconds(seconds: float | Result) -> Expr:
    """A time given as a result (recorded) or as seconds, shown in ms to the digits that are exact."""
    return term(seconds) if isinstance(seconds, Result) else term(seconds, MS.precise(seconds))


def implied_mfu(ops: Result, seconds: float | Result, peak: Result) -> Result:
    """The MFU a time implies for a known amount of work."""
    return (term(ops) / (_seconds(seconds) * term(peak, str(peak)))).result(PERCENT, "operations ÷ (time × dense peak)")


def prefill_mfu(stack: Stack, prompt: int) -> Result:
    """The MFU the model's prefill reaches: the prompt's operations over its time at the dense peak."""
    return implied_mfu(operations.prefill_ops(stack.model, prompt), prefill_time(stack, prompt),
                       peak_compute(stack.card, stack.weight_precision))


def prefill_rate(stack: Stack) -> Result:
    """The operations per second the engine's prefill of the typical prompt achieves: what a plan
    divides mean operations by."""
    prompt = stack.traffic.prompt_p50
    ops = operations.prefill_ops(stack.model, prompt)
    return (term(ops) / term(prefill_time(stack, prompt))).result(
        TFLOPS, "prefill operations of the typical prompt ÷ its prefill time")


def prefill_floor_tokens(stack: Stack) -> Result:
    """The prompt length below which prefill waits on reading the weights rather than on arithmetic:
    the weights' reading time at the achieved bandwidth × the achieved compute ÷ operations per token."""
    rate, bandwidth = achieved_compute(stack), achieved_bandwidth(stack)
    reading = (term(weights_read(stack.model, stack.weight_precision)) / term(bandwidth)).result(
        MS, "weights read ÷ achieved bandwidth")
    return (term(reading, MS.precise(reading.value, 6)) * term(rate) / (2 * term(operations.block_parameters(stack.model))))\
        .result(TOKENS, "weights' reading time × achieved compute ÷ (2 × block parameters)")


def prefill_intensity(stack: Stack, prompt: int) -> Result:
    """Operations per byte of a prefill: every weight read once for the whole prompt, the prompt's
    cache written once."""
    ops = operations.prefill_ops(stack.model, prompt)
    written = decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1, prompt).cache
    weights = weights_read(stack.model, stack.weight_precision)
    return (term(ops, f"{grouped(ops.value)} FLOP") / (term(weights, f"{grouped(weights.value)} B")
                                                     + term(written, f"{grouped(written.value)} B"))).result(
        FLOP_PER_BYTE, "prefill operations ÷ (weights read + cache written)")


@dataclass(frozen=True)
class DecodeStep:
    """One decode step: the matrix multiplies with the LM head, which read every weight once for the
    whole batch; attention, which reads every sequence's cache; the norms and activation; and the
    step's fixed cost. Each kind of kernel is its roofline over its measured share."""

    read: DecodeRead
    matmuls: Group
    head: Group
    attention: Group
    others: Group
    overhead: Result
    read_model: Model

    @property
    def bandwidth(self) -> Result:
        return self.matmuls.bandwidth

    @property
    def compute(self) -> Result:
        return self.matmuls.compute

    @property
    def groups(self) -> tuple[Group, ...]:
        return (self.matmuls, self.head, self.attention, self.others)

    @cached_property
    def ops(self) -> Result:
        return (term(self.matmuls.ops) + term(self.head.ops) + term(self.attention.ops)).result(
            GFLOP, "matrix multiplies + LM head + attention")

    @cached_property
    def memory_time(self) -> Result:
        """Every byte the step must read at the datasheet's bandwidth: the floor no kernel beats."""
        return (term(self.read.total) / term(self.bandwidth, str(self.bandwidth))).result(MS, "bytes read ÷ datasheet bandwidth")

    @cached_property
    def kernels(self) -> Result:
        """The step's kernels without its fixed cost: what a draft pass inside an engine step takes."""
        return total(term(g.time) for g in self.groups).result(
            MS, "matrix multiplies + LM head + attention + norms and activation")

    @cached_property
    def time(self) -> Result:
        return (total(term(g.time) for g in self.groups) + term(self.overhead)).result(
            MS, "matrix multiplies + LM head + attention + norms and activation + fixed cost")

    @property
    def bound(self) -> str:
        if self.matmuls.bound == "reading":
            return "memory bandwidth"
        return "compute in the matrix multiplies, bandwidth in attention"

    @cached_property
    def cache_share_of_time(self) -> Result:
        return (term(self.attention.time) / term(self.time)).result(PERCENT, "attention's time ÷ the step's")

    @cached_property
    def achieved_bandwidth_share(self) -> Result:
        """The share of bandwidth the whole step reaches: bytes it reads ÷ (its time × bandwidth)."""
        return (term(self.read.total) / (term(self.time) * term(self.bandwidth, str(self.bandwidth)))).result(
            PERCENT, "bytes read ÷ (step time × bandwidth)")

    @cached_property
    def intensity(self) -> Result:
        return (term(self.ops) / term(self.read.total)).result(FLOP_PER_BYTE, "step operations ÷ bytes read")

    @cached_property
    def tokens_per_second(self) -> Result:
        """Tokens the whole batch produces per second: one per sequence per step."""
        return (term(self.read.batch) / term(self.time)).result(TOKENS_PER_S, "batch ÷ step time")

    @cached_property
    def tokens_per_second_per_user(self) -> Result:
        return (1 / term(self.time)).result(TOKENS_PER_S, "1 ÷ step time")


def decode_step(stack: Stack, batch: int, tokens: int) -> DecodeStep:
    """`batch` sequences each holding `tokens` tokens (a window caps what is read and attended)."""
    return _decode_step(timed(stack), batch, tokens)


@lru_cache(maxsize=2048)
def _decode_step(stack: Timed, batch: int, tokens: int) -> DecodeStep:
    held = stack.model.tokens_cached(tokens)
    hw, model = stack.hardware, stack.model
    return DecodeStep(
        read=decode_read(model, stack.weight_precision, stack.kv_precision, batch, held),
        matmuls=steptime.matrices(hw, model, batch),
        head=steptime.head(hw, model, batch),
        attention=steptime.decode_attention(hw, model, batch, batch * held),
        others=steptime.elementwise(hw, model, batch),
        overhead=steptime.overhead(),
        read_model=model,
    )


@lru_cache(maxsize=512)
def matmul_crossing(stack: Stack) -> Result:
    """The batch at which the matrix multiplies take as long to compute as to read their weights, at
    the rates the kernels achieve: achieved ridge × weight bytes read ÷ operations per token. It does
    not depend on length."""
    ridge = effective_ridge(stack)
    weights = weights_read(stack.model, stack.weight_precision)
    per_token = operations.linear_ops_per_token(stack.model)
    crossing = (term(ridge, FLOP_PER_BYTE.precise(ridge.value, 6)) * term(weights, f"{grouped(weights.value)} B")
                / term(per_token, f"{grouped(per_token.value)} FLOP"))
    return crossing.result(COUNT, "achieved ridge × weight bytes read ÷ operations per token", shown=grouped(crossing.value))


def attention_intensity(stack: Stack) -> Result:
    """Attention's operations per byte of cache it reads: set by the query heads sharing each KV
    head and by the bytes per cached element, never by the batch or the length."""
    per_position = operations.attention_ops_per_position(stack.model)
    per_token = decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1, 1).cache
    intensity = term(per_position, f"{grouped(per_position.value)} FLOP") / term(per_token, f"{grouped(per_token.value)} B")
    return intensity.result(FLOP_PER_BYTE, "attention operations per position ÷ cache bytes per token",
                            shown=FLOP_PER_BYTE.show(intensity.value, 1))


@lru_cache(maxsize=512)
def decode_intensity_limit(stack: Stack, tokens: int) -> Result:
    """Where decode's intensity levels off as the batch grows: each added sequence brings its own
    operations and its own cache to read, so their ratio, not the batch, sets the ceiling."""
    one = decode_step(stack, 1, tokens)
    cache = one.read.cache
    return (term(one.ops, f"{grouped(one.ops.value)} FLOP") / term(cache, f"{grouped(cache.value)} B")).result(
        FLOP_PER_BYTE, "one sequence's operations ÷ its cache bytes")


@dataclass(frozen=True)
class Crossing:
    """Whether decode's matrix multiplies ever turn compute-bound at this length on this card:
    they do at `batch` sequences whatever the length, but only if the cache admits that many."""

    tokens: int
    batch: Result
    admitted: Result
    limit: Result
    ridge: Result

    @property
    def happens(self) -> bool:
        return self.admitted.value >= self.batch.value


@lru_cache(maxsize=512)
def compute_bound_batch(stack: Stack, tokens: int) -> Crossing:
    """The matrix multiplies' crossing set against the sequences of this length the cache admits,
    and the step's intensity ceiling at this length."""
    capacity = kvcache.ladder(stack).token_capacity
    charged = kvcache.tokens_in_blocks(stack.model.tokens_cached(tokens), stack.block_size)
    return Crossing(tokens, matmul_crossing(stack), kvcache.users_by_tokens(capacity, charged),
                    decode_intensity_limit(stack, tokens), effective_ridge(stack))


def request_time(stack: Stack, prompt: int, output: int, batch: int) -> Result:
    """TTFT plus the remaining output tokens at the step time of the output's midpoint."""
    ttft = prefill_time(stack, prompt)
    step = decode_step(stack, batch, prompt + output // 2).time
    return (term(ttft) + term(output - 1) * term(step)).result(SECONDS, "TTFT + (output − 1) × ITL at the output's midpoint")


def implied_bandwidth_fraction(read: DecodeRead, seconds: float | Result, card: Card) -> Result:
    """The bandwidth fraction a step time implies for the bytes the step must read."""
    return (term(read.total) / (_seconds(seconds) * term(card.bandwidth, str(card.bandwidth)))).result(
        PERCENT, "bytes read ÷ (time × bandwidth)")


STEP_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def step_against_batch(stack: Stack, tokens: int, admitted: int) -> dict:
    """A decode step's kernel groups, the step, and the throughput, against batch, at one length; with
    the batch where the matrix multiplies turn compute-bound and the batch the cache admits as
    vertical markers. Curves, and the rows of the chart's table."""
    steps = [decode_step(stack, batch, tokens) for batch in STEP_BATCHES]
    matmuls = [1000 * (s.matmuls.time.value + s.head.time.value) for s in steps]
    attention = [1000 * s.attention.time.value for s in steps]
    step = [1000 * s.time.value for s in steps]
    throughput = [s.tokens_per_second.value for s in steps]
    crossing = matmul_crossing(stack).value
    top = max(step)
    x = list(STEP_BATCHES)
    within = STEP_BATCHES[0] <= crossing <= STEP_BATCHES[-1]
    full = 0 < admitted <= STEP_BATCHES[-1]
    curves = [
        {"name": "matrix multiplies and LM head, as measured", "x": x, "y": matmuls},
        {"name": "decode attention, as measured", "x": x, "y": attention},
        {"name": "decode step (every kernel and the fixed cost)", "x": x, "y": step},
        {"name": "tokens per second, whole batch", "x": x, "y": throughput},
        {"name": "the matrix multiplies turn compute-bound", "x": [crossing] * 2 if within else [],
         "y": [0, top] if within else []},
        {"name": "the cache is full", "x": [admitted] * 2 if full else [], "y": [0, top] if full else []},
    ]
    rows = [[grouped(b) + ("" if b <= admitted else " (over the cache)"), f"{matmuls[i]:.1f}", f"{attention[i]:.1f}",
             f"{step[i]:.1f}", grouped(throughput[i])] for i, b in enumerate(STEP_BATCHES)]
    return {"curves": curves, "rows": rows}


@dataclass(frozen=True)
class ChunkedPrefill:
    """A prompt prefilled in chunks that ride along with a running batch's decode steps. The chunk's
    tokens join the batch's matrix multiplies, which read the weights once for both; its attention
    joins the batch's attention."""

    prompt: int
    chunk: int
    decode: DecodeStep
    mixed: Step
    crossing: Result

    @property
    def mixed_step(self) -> Result:
        return self.mixed.time

    @property
    def added(self) -> Result:
        """What the chunk adds to every running sequence's step."""
        return subtracted(self.mixed_step, self.decode.time).result(MS, "mixed step − decode step")

    @property
    def free_tokens(self) -> Result:
        """Prompt tokens the matrix multiplies can take on while they still wait for their weights."""
        batch = self.decode.read.batch
        value = self.crossing.value - batch
        if value <= 0:
            return Result(0, TOKENS, formula="none: the batch alone is past the matrix multiplies' crossing",
                          worked=(f"the batch ({grouped(batch)}) is already past the crossing ({self.crossing}): every "
                                  f"prompt token lengthens the step"), inputs=made_of(self.crossing))
        return (term(self.crossing) - term(batch)).result(TOKENS, "the matrix multiplies' crossing − the batch")

    @property
    def steps(self) -> Result:
        prompt, chunk = field(self, "prompt", TOKENS, "prompt length"), field(self, "chunk", TOKENS, "chunk size")
        return ceil_div(term(prompt, grouped(self.prompt)), term(chunk, grouped(self.chunk))).result(COUNT, "⌈prompt ÷ chunk⌉")

    @property
    def ttft(self) -> Result:
        """The prompt's first token waits for every chunk's step."""
        steps = self.steps
        return (term(steps, grouped(steps.value)) * term(self.mixed_step)).result(MS, "chunks × mixed step")


def verify_step(stack: Stack, batch: int, gamma: int, tokens: int) -> Step:
    """One target pass verifying γ drafts for each of `batch` sequences holding `tokens`: the block
    matrices and the LM head over batch × (γ + 1) positions (vLLM scores every draft), and each cache
    read once for its γ + 1 queries; γ of 0 is an ordinary decode step."""
    return _verify_step(timed(stack), batch, gamma, tokens)


@lru_cache(maxsize=512)
def _verify_step(stack: Timed, batch: int, gamma: int, tokens: int) -> Step:
    hw, model = stack.hardware, stack.model
    held = model.tokens_cached(tokens)
    positions = batch * (gamma + 1)
    return Step((steptime.matrices(hw, model, positions), steptime.head(hw, model, positions),
                 steptime.decode_attention(hw, model, batch, batch * held, queries=gamma + 1),
                 steptime.elementwise(hw, model, positions)),
                steptime.overhead())


def mixed_step(stack: Stack, batch: int, tokens: int, chunk: int, done: int = 0) -> Step:
    """`batch` sequences decoding at `tokens` each, and one prompt chunk of `chunk` tokens after `done`."""
    t = timed(stack)
    hw, model = t.hardware, t.model
    held = model.tokens_cached(tokens)
    width = batch + chunk
    return Step((steptime.matrices(hw, model, width), steptime.head(hw, model, batch),
                 steptime.decode_attention(hw, model, batch, batch * held),
                 steptime.prefill_attention(hw, model, ((chunk, done),)), steptime.elementwise(hw, model, width)),
                steptime.overhead())


def chunked_prefill(stack: Stack, prompt: int, chunk: int, batch: int, tokens: int) -> ChunkedPrefill:
    size = min(chunk, prompt)
    return ChunkedPrefill(prompt=prompt, chunk=chunk, decode=decode_step(stack, batch, tokens),
                          mixed=mixed_step(stack, batch, tokens, size), crossing=matmul_crossing(stack))
