"""The time model: how long prefill and a decode step take, and what that makes TTFT, ITL and
throughput, for any model × card × precision calc knows.

Prefill is compute-bound: its operations at an achieved fraction of the card's dense peak (MFU).
A decode step must both read its bytes (weights once, every sequence's cache) and do its
operations; it takes the longer of the two, each at its achieved rate. The two efficiencies are
named inputs (`Efficiency`), with the measurements they stand for in calc.measured.
"""
from __future__ import annotations

from functools import cached_property, lru_cache

import math
from dataclasses import dataclass

from . import kvcache, operations
from .cards import Card
from .models import Model
from .precision import FP8, Precision
from .roofline import DecodeRead, decode_read, weights_read
from .stack import Efficiency, Stack
from .units import COUNT, FLOP_PER_BYTE, FRACTION, GFLOP, MS, PERCENT, SECONDS, TFLOPS, TOKENS, TOKENS_PER_S, Result, given, grouped


@lru_cache(maxsize=512)
def peak_compute(card: Card, precision: Precision) -> Result:
    """The dense tensor peak the matrix multiplies run at. fp8 checkpoints of this family quantise
    activations too (W8A8), so they use fp8 tensor cores where the card has them; int4 (AWQ, GPTQ)
    is weight-only and multiplies in bf16."""
    if precision == FP8 and card.fp8_dense_tflops > 0:
        return Result(card.fp8_dense.value, TFLOPS, formula="dense fp8 tensor peak (datasheet)",
                      worked=f"fp8 weights and activations on fp8 tensor cores: {card.fp8_dense}")
    why = "no fp8 tensor cores, so fp8 weights multiply in bf16" if precision == FP8 else f"{precision.name} weights multiply in bf16"
    return Result(card.bf16_dense.value, TFLOPS, formula="dense bf16 tensor peak (datasheet)",
                  worked=f"{why}: {card.bf16_dense}" if precision.quantised else f"{card.bf16_dense}")


def difference(first: float, second: float, unit) -> str:
    """first − second = result, with the operands shown to enough places that a small difference of
    large numbers can still be redone by hand."""
    result = first - second
    scaled = abs(result / unit.scale)
    places = unit.decimals
    if scaled:
        places = max(places, min(12, math.ceil(-math.log10(scaled * 1e-4))))
    return f"{unit.show(first, places)} − {unit.show(second, places)} = {unit.show(result)}"


@lru_cache(maxsize=512)
def achieved(peak: Result, fraction: float, what: str) -> Result:
    value = peak.value * fraction
    return Result(value, peak.unit, formula=f"{what} × peak",
                  worked=f"{given(fraction, FRACTION)} × {peak} = {peak.unit.show(value)}")


def ridge_point(card: Card, precision: Precision) -> Result:
    """Operations per byte at which the peak compute and the bandwidth take equal time."""
    peak = peak_compute(card, precision)
    value = peak.value / card.bandwidth.value
    return Result(value, FLOP_PER_BYTE, formula="dense peak ÷ memory bandwidth",
                  worked=f"{peak} ÷ {card.bandwidth} = {FLOP_PER_BYTE.show(value)}")


@lru_cache(maxsize=512)
def effective_ridge(stack: Stack) -> Result:
    """The ridge as the model sees it: achieved compute ÷ achieved bandwidth."""
    compute = achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
    bandwidth = achieved(stack.card.bandwidth, stack.efficiency.bandwidth_fraction, "bandwidth fraction")
    value = compute.value / bandwidth.value
    return Result(value, FLOP_PER_BYTE, formula="MFU × peak ÷ (bandwidth fraction × bandwidth)",
                  worked=f"{compute.operand} ÷ {bandwidth.operand} = {FLOP_PER_BYTE.show(value)}")


@dataclass(frozen=True)
class Timed:
    """What the time model reads of a stack. Prefill and a decode step do not depend on the traffic,
    the prices or the engine's flags, so they are memoised by this part alone: a chart over the
    traffic (document 14's fleet against request rate) reuses each step instead of deriving it again
    at every rate."""

    model: Model
    card: Card
    weight_precision: Precision
    kv_precision: Precision
    efficiency: Efficiency


def timed(stack: Stack) -> Timed:
    return Timed(stack.model, stack.card, stack.weight_precision, stack.kv_precision, stack.efficiency)


def prefill_time(stack: Stack, prompt: int) -> Result:
    """A prompt's operations at the achieved compute rate, or, for a prompt too short to keep the
    card busy, the time to read the weights once, whichever is longer."""
    return _prefill_time(timed(stack), prompt)


@lru_cache(maxsize=2048)
def _prefill_time(stack: Timed, prompt: int) -> Result:
    ops = operations.prefill_ops(stack.model, prompt)
    rate = achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
    bandwidth = achieved(stack.card.bandwidth, stack.efficiency.bandwidth_fraction, "bandwidth fraction")
    weights = weights_read(stack.model, stack.weight_precision)
    computing, reading = ops.value / rate.value, weights.value / bandwidth.value
    value = max(computing, reading)
    return Result(value, MS, formula="max(prefill operations ÷ achieved compute, weights ÷ achieved bandwidth)",
                  worked=(f"max({ops.operand} ÷ {rate.operand}, {weights.operand} ÷ {bandwidth.operand}) = "
                          f"{MS.show(value)}"))


def prefill_floor_tokens(stack: Stack) -> Result:
    """The prompt length below which prefill waits on reading the weights rather than on arithmetic."""
    rate = achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
    bandwidth = achieved(stack.card.bandwidth, stack.efficiency.bandwidth_fraction, "bandwidth fraction")
    reading = weights_read(stack.model, stack.weight_precision).value / bandwidth.value
    per_token = 2 * operations.block_parameters(stack.model)
    value = reading * rate.value / per_token
    return Result(value, TOKENS, formula="weights' reading time × achieved compute ÷ (2 × block parameters)",
                  worked=(f"{MS.precise(reading, 6)} × {rate.operand} ÷ (2 × {grouped(per_token // 2)}) = "
                          f"{TOKENS.show(value)}"))


def prefill_intensity(stack: Stack, prompt: int) -> Result:
    """Operations per byte of a prefill: every weight read once for the whole prompt, the prompt's
    cache written once."""
    ops = operations.prefill_ops(stack.model, prompt)
    written = decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1, prompt).cache
    weights = weights_read(stack.model, stack.weight_precision)
    value = ops.value / (weights.value + written.value)
    return Result(value, FLOP_PER_BYTE, formula="prefill operations ÷ (weights read + cache written)",
                  worked=(f"{grouped(ops.value)} FLOP ÷ ({grouped(weights.value)} B + {grouped(written.value)} B) = "
                          f"{FLOP_PER_BYTE.show(value)}"))


@dataclass(frozen=True)
class Kernels:
    """One group of a step's kernels: the bytes it reads, the operations it does, and the longer of
    the two times, since a kernel overlaps its own reading and computing but not another's."""

    name: str
    bytes: Result
    ops: Result
    reading: Result
    computing: Result

    @cached_property
    def time(self) -> Result:
        longer = max(self.reading.value, self.computing.value)
        return Result(longer, MS, formula="the longer of reading and computing",
                      worked=f"max({self.reading.operand}, {self.computing.operand}) = {MS.show(longer)}")

    @property
    def bound(self) -> str:
        return "reading" if self.reading.value >= self.computing.value else "computing"

    @cached_property
    def intensity(self) -> Result:
        value = self.ops.value / self.bytes.value if self.bytes.value else 0.0
        return Result(value, FLOP_PER_BYTE, formula="operations ÷ bytes read",
                      worked=f"{self.ops.operand} ÷ {self.bytes.operand} = {FLOP_PER_BYTE.show(value)}")


def kernels(name: str, read_bytes: Result, ops: Result, bandwidth: Result, compute: Result) -> Kernels:
    reading, computing = read_bytes.value / bandwidth.value, ops.value / compute.value
    return Kernels(
        name, read_bytes, ops,
        reading=Result(reading, MS, formula="bytes ÷ achieved bandwidth",
                       worked=f"{read_bytes.operand} ÷ {bandwidth.operand} = {MS.show(reading)}"),
        computing=Result(computing, MS, formula="operations ÷ achieved compute",
                         worked=f"{ops.operand} ÷ {compute.operand} = {MS.show(computing)}"),
    )


@dataclass(frozen=True)
class DecodeStep:
    """One decode step as two groups of kernels run one after the other: the matrix multiplies,
    which read every weight once for the whole batch, and attention, which reads every sequence's
    cache. Each takes the longer of its reading and computing; the step takes their sum."""

    read: DecodeRead
    matmuls: Kernels
    attention: Kernels
    read_model: Model
    bandwidth: Result
    compute: Result

    @cached_property
    def ops(self) -> Result:
        value = self.matmuls.ops.value + self.attention.ops.value
        return Result(value, GFLOP, formula="matrix multiplies + attention",
                      worked=f"{self.matmuls.ops.operand} + {self.attention.ops.operand} = {GFLOP.show(value)}")

    @cached_property
    def memory_time(self) -> Result:
        """Every byte the step reads, at the achieved bandwidth: the step's floor."""
        value = self.read.total.value / self.bandwidth.value
        return Result(value, MS, formula="bytes read ÷ achieved bandwidth",
                      worked=f"{self.read.total.operand} ÷ {self.bandwidth.operand} = {MS.show(value)}")

    @cached_property
    def compute_time(self) -> Result:
        value = self.ops.value / self.compute.value
        return Result(value, MS, formula="step operations ÷ achieved compute",
                      worked=f"{self.ops.operand} ÷ {self.compute.operand} = {MS.show(value)}")

    @cached_property
    def time(self) -> Result:
        value = self.matmuls.time.value + self.attention.time.value
        return Result(value, MS, formula="matrix multiplies + attention, each the longer of reading and computing",
                      worked=(f"max({self.matmuls.reading.operand}, {self.matmuls.computing.operand}) + "
                              f"max({self.attention.reading.operand}, {self.attention.computing.operand}) = "
                              f"{MS.show(value)}"))

    @property
    def bound(self) -> str:
        if self.matmuls.bound == "reading":
            return "memory bandwidth"
        return "compute in the matrix multiplies, bandwidth in attention"

    @cached_property
    def cache_share_of_time(self) -> Result:
        value = self.attention.time.value / self.time.value
        return Result(value, PERCENT, formula="attention's time ÷ the step's",
                      worked=f"{self.attention.time.operand} ÷ {self.time.operand} = {PERCENT.show(value)}")

    @cached_property
    def intensity(self) -> Result:
        value = self.ops.value / self.read.total.value
        return Result(value, FLOP_PER_BYTE, formula="step operations ÷ bytes read",
                      worked=f"{self.ops.operand} ÷ {self.read.total.operand} = {FLOP_PER_BYTE.show(value)}")

    @cached_property
    def tokens_per_second(self) -> Result:
        """Tokens the whole batch produces per second: one per sequence per step."""
        value = self.read.batch / self.time.value
        return Result(value, TOKENS_PER_S, formula="batch ÷ step time",
                      worked=f"{grouped(self.read.batch)} ÷ {MS.precise(self.time.value)} = {TOKENS_PER_S.show(value)}")

    @cached_property
    def tokens_per_second_per_user(self) -> Result:
        value = 1 / self.time.value
        return Result(value, TOKENS_PER_S, formula="1 ÷ step time",
                      worked=f"1 ÷ {MS.precise(self.time.value)} = {TOKENS_PER_S.show(value)}")


def decode_step(stack: Stack, batch: int, tokens: int) -> DecodeStep:
    """`batch` sequences each holding `tokens` tokens (a window caps what is read and attended)."""
    return _decode_step(timed(stack), batch, tokens)


@lru_cache(maxsize=2048)
def _decode_step(stack: Timed, batch: int, tokens: int) -> DecodeStep:
    held = stack.model.tokens_cached(tokens)
    read = decode_read(stack.model, stack.weight_precision, stack.kv_precision, batch, held)
    bandwidth = achieved(stack.card.bandwidth, stack.efficiency.bandwidth_fraction, "bandwidth fraction")
    compute = achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
    linear = batch * operations.linear_ops_per_token(stack.model).value
    attention = batch * operations.attention_ops_per_position(stack.model).value * held
    return DecodeStep(
        read=read,
        matmuls=kernels("matrix multiplies", read.weights,
                        Result(linear, GFLOP, formula="batch × 2 × parameters multiplied",
                               worked=f"{grouped(batch)} × 2 × {grouped(operations.multiplied_parameters(stack.model).value)}"
                                      f" = {GFLOP.show(linear)}"),
                        bandwidth, compute),
        attention=kernels("attention", read.cache,
                          Result(attention, GFLOP, formula="batch × attention per position × tokens held",
                                 worked=(f"{grouped(batch)} × {grouped(operations.attention_ops_per_position(stack.model).value)}"
                                         f" × {grouped(held)} = {GFLOP.show(attention)}")),
                          bandwidth, compute),
        read_model=stack.model,
        bandwidth=bandwidth,
        compute=compute,
    )


@lru_cache(maxsize=512)
def matmul_crossing(stack: Stack) -> Result:
    """The batch at which the matrix multiplies take as long to compute as to read their weights:
    ridge × weight bytes read ÷ (2 × parameters multiplied per token). It does not depend on length."""
    ridge = effective_ridge(stack)
    weights = weights_read(stack.model, stack.weight_precision).value
    per_token = operations.linear_ops_per_token(stack.model).value
    value = ridge.value * weights / per_token
    return Result(value, COUNT, formula="achieved ridge × weight bytes read ÷ operations per token",
                  worked=(f"{FLOP_PER_BYTE.precise(ridge.value, 6)} × {grouped(weights)} B ÷ {grouped(per_token)} FLOP = "
                          f"{grouped(value)}"))


def attention_intensity(stack: Stack) -> Result:
    """Attention's operations per byte of cache it reads: set by the query heads sharing each KV
    head and by the bytes per cached element, never by the batch or the length."""
    per_position = operations.attention_ops_per_position(stack.model).value
    per_token = decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1, 1).cache.value
    value = per_position / per_token
    return Result(value, FLOP_PER_BYTE, formula="attention operations per position ÷ cache bytes per token",
                  worked=f"{grouped(per_position)} FLOP ÷ {grouped(per_token)} B = {FLOP_PER_BYTE.show(value, 1)}")


@lru_cache(maxsize=512)
def decode_intensity_limit(stack: Stack, tokens: int) -> Result:
    """Where decode's intensity levels off as the batch grows: each added sequence brings its own
    operations and its own cache to read, so their ratio, not the batch, sets the ceiling."""
    one = decode_step(stack, 1, tokens)
    cache = one.read.cache
    value = one.ops.value / cache.value
    return Result(value, FLOP_PER_BYTE, formula="one sequence's operations ÷ its cache bytes",
                  worked=f"{grouped(one.ops.value)} FLOP ÷ {grouped(cache.value)} B = {FLOP_PER_BYTE.show(value)}")


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
    value = ttft.value + (output - 1) * step.value
    return Result(value, SECONDS, formula="TTFT + (output − 1) × ITL at the output's midpoint",
                  worked=f"{MS.precise(ttft.value)} + {grouped(output - 1)} × {MS.precise(step.value)} = {SECONDS.show(value)}")


def implied_mfu(ops: Result, seconds: float, peak: Result) -> Result:
    """The MFU a measured time implies for a known amount of work."""
    value = ops.value / (seconds * peak.value)
    return Result(value, PERCENT, formula="operations ÷ (measured time × dense peak)",
                  worked=f"{ops.operand} ÷ ({MS.precise(seconds)} × {peak}) = {PERCENT.show(value)}")


def implied_bandwidth_fraction(read: DecodeRead, seconds: float, card: Card) -> Result:
    """The bandwidth fraction a measured step time implies for the bytes the step must read."""
    value = read.total.value / (seconds * card.bandwidth.value)
    return Result(value, PERCENT, formula="bytes read ÷ (measured time × bandwidth)",
                  worked=f"{read.total.operand} ÷ ({MS.precise(seconds)} × {card.bandwidth}) = {PERCENT.show(value)}")


STEP_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def step_against_batch(stack: Stack, tokens: int, admitted: int) -> dict:
    """A decode step's two kernel groups, the step, and the throughput, against batch, at one
    length; with the batch where the matrix multiplies turn compute-bound and the batch the cache
    admits as vertical markers. Curves, and the rows of the chart's table."""
    steps = [decode_step(stack, batch, tokens) for batch in STEP_BATCHES]
    matmuls = [1000 * s.matmuls.time.value for s in steps]
    attention = [1000 * s.attention.time.value for s in steps]
    step = [1000 * s.time.value for s in steps]
    throughput = [s.tokens_per_second.value for s in steps]
    crossing = matmul_crossing(stack).value
    top = max(step)
    x = list(STEP_BATCHES)
    within = STEP_BATCHES[0] <= crossing <= STEP_BATCHES[-1]
    full = 0 < admitted <= STEP_BATCHES[-1]
    curves = [
        {"name": "matrix multiplies: the longer of reading the weights and computing", "x": x, "y": matmuls},
        {"name": "attention: the longer of reading the cache and computing", "x": x, "y": attention},
        {"name": "decode step (the two added)", "x": x, "y": step},
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
    matrix work joins the batch's matrix multiplies, which read the weights once for both; its
    attention joins the batch's attention."""

    prompt: int
    chunk: int
    decode: DecodeStep
    chunk_linear: Result
    chunk_attention: Result
    rate: Result

    @property
    def mixed_step(self) -> Result:
        matmuls = max(self.decode.matmuls.reading.value,
                      (self.decode.matmuls.ops.value + self.chunk_linear.value) / self.rate.value)
        attention = max(self.decode.attention.reading.value,
                        (self.decode.attention.ops.value + self.chunk_attention.value) / self.rate.value)
        value = matmuls + attention
        return Result(value, MS, formula="matrix multiplies with the chunk + attention with the chunk",
                      worked=(f"max({self.decode.matmuls.reading.operand}, ({self.decode.matmuls.ops.operand} + "
                              f"{self.chunk_linear.operand}) ÷ {self.rate.operand}) + "
                              f"max({self.decode.attention.reading.operand}, ({self.decode.attention.ops.operand} + "
                              f"{self.chunk_attention.operand}) ÷ {self.rate.operand}) = {MS.show(value)}"))

    @property
    def added(self) -> Result:
        """What the chunk adds to every running sequence's step."""
        value = self.mixed_step.value - self.decode.time.value
        return Result(value, MS, formula="mixed step − decode step",
                      worked=difference(self.mixed_step.value, self.decode.time.value, MS))

    @property
    def free_tokens(self) -> Result:
        """Prompt tokens the matrix multiplies can take on while they still wait for their weights."""
        slack = self.decode.matmuls.reading.value - self.decode.matmuls.computing.value
        per_token = 2 * operations.block_parameters(self.decode.read_model)
        if slack <= 0:
            return Result(0, TOKENS, formula="none: the matrix multiplies already compute longer than they read",
                          worked=(f"the matrix multiplies already compute ({self.decode.matmuls.computing}) longer than "
                                  f"they read ({self.decode.matmuls.reading}): every prompt token lengthens the step"))
        value = slack * self.rate.value / per_token
        return Result(value, TOKENS, formula="(reading the weights − computing) × achieved compute ÷ (2 × block parameters)",
                      worked=(f"({MS.precise(self.decode.matmuls.reading.value, 9)} − "
                              f"{MS.precise(self.decode.matmuls.computing.value, 9)}) × "
                              f"{self.rate.operand} ÷ (2 × {grouped(per_token // 2)}) = {TOKENS.show(value)}"))

    @property
    def steps(self) -> Result:
        value = -(-self.prompt // self.chunk)
        return Result(value, COUNT, formula="⌈prompt ÷ chunk⌉",
                      worked=f"⌈{grouped(self.prompt)} ÷ {grouped(self.chunk)}⌉ = {grouped(value)}")

    @property
    def ttft(self) -> Result:
        """The prompt's first token waits for every chunk's step."""
        value = self.steps.value * self.mixed_step.value
        return Result(value, MS, formula="chunks × mixed step",
                      worked=f"{grouped(self.steps.value)} × {MS.precise(self.mixed_step.value)} = {MS.show(value)}")


def chunked_prefill(stack: Stack, prompt: int, chunk: int, batch: int, tokens: int) -> ChunkedPrefill:
    size = min(chunk, prompt)
    blocks = operations.block_parameters(stack.model)
    linear = 2 * blocks * size
    attention = operations.attention_ops_per_position(stack.model).value * operations.causal_positions(stack.model, size)
    return ChunkedPrefill(
        prompt=prompt,
        chunk=chunk,
        decode=decode_step(stack, batch, tokens),
        chunk_linear=Result(linear, GFLOP, formula="2 × block parameters × chunk",
                            worked=f"2 × {grouped(blocks)} × {grouped(size)} = {GFLOP.show(linear)}"),
        chunk_attention=Result(attention, GFLOP, formula="attention per position × the chunk's causal positions",
                               worked=f"{GFLOP.show(attention)}"),
        rate=achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU"),
    )
