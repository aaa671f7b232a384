"""The time model: how long prefill and a decode step take, and what that makes TTFT, ITL and
throughput, for any model × card × precision calc knows.

Prefill is compute-bound: its operations at an achieved fraction of the card's dense peak (MFU).
A decode step must both read its bytes (weights once, every sequence's cache) and do its
operations; it takes the longer of the two, each at its achieved rate. The two efficiencies are
named inputs (`Efficiency`), with the measurements they stand for in calc.measured.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import operations
from .cards import Card
from .models import Model
from .precision import FP8, Precision
from .roofline import DecodeRead, decode_read, weights_read
from .stack import Stack
from .units import COUNT, FLOP_PER_BYTE, FRACTION, MS, PERCENT, SECONDS, TFLOPS, TOKENS, TOKENS_PER_S, Result, given, grouped


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


def effective_ridge(stack: Stack) -> Result:
    """The ridge as the model sees it: achieved compute ÷ achieved bandwidth."""
    compute = achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
    bandwidth = achieved(stack.card.bandwidth, stack.efficiency.bandwidth_fraction, "bandwidth fraction")
    value = compute.value / bandwidth.value
    return Result(value, FLOP_PER_BYTE, formula="MFU × peak ÷ (bandwidth fraction × bandwidth)",
                  worked=f"{compute.operand} ÷ {bandwidth.operand} = {FLOP_PER_BYTE.show(value)}")


def prefill_time(stack: Stack, prompt: int) -> Result:
    """A prompt's operations at the achieved compute rate: compute-bound, as prefill is."""
    ops = operations.prefill_ops(stack.model, prompt)
    rate = achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
    seconds = ops.value / rate.value
    return Result(seconds, MS, formula="prefill operations ÷ (MFU × dense peak)",
                  worked=f"{ops.operand} ÷ {rate.operand} = {MS.show(seconds)}")


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
class DecodeStep:
    """One decode step: what it reads, what it computes, and which of the two sets its time."""

    read: DecodeRead
    ops: Result
    memory_time: Result
    compute_time: Result
    read_model: Model

    @property
    def time(self) -> Result:
        longer = max(self.memory_time, self.compute_time, key=lambda r: r.value)
        return Result(longer.value, MS, formula="the longer of reading and computing",
                      worked=f"max({self.memory_time}, {self.compute_time}) = {MS.show(longer.value)}")

    @property
    def bound(self) -> str:
        return "memory bandwidth" if self.memory_time.value >= self.compute_time.value else "compute"

    @property
    def intensity(self) -> Result:
        value = self.ops.value / self.read.total.value
        return Result(value, FLOP_PER_BYTE, formula="step operations ÷ bytes read",
                      worked=f"{self.ops.operand} ÷ {self.read.total.operand} = {FLOP_PER_BYTE.show(value)}")

    @property
    def tokens_per_second(self) -> Result:
        """Tokens the whole batch produces per second: one per sequence per step."""
        value = self.read.batch / self.time.value
        return Result(value, TOKENS_PER_S, formula="batch ÷ step time",
                      worked=f"{grouped(self.read.batch)} ÷ {MS.precise(self.time.value)} = {TOKENS_PER_S.show(value)}")

    @property
    def tokens_per_second_per_user(self) -> Result:
        value = 1 / self.time.value
        return Result(value, TOKENS_PER_S, formula="1 ÷ step time",
                      worked=f"1 ÷ {MS.precise(self.time.value)} = {TOKENS_PER_S.show(value)}")


def decode_step(stack: Stack, batch: int, tokens: int) -> DecodeStep:
    """`batch` sequences each holding `tokens` tokens (a window caps what is read and attended)."""
    held = stack.model.tokens_cached(tokens)
    read = decode_read(stack.model, stack.weight_precision, stack.kv_precision, batch, held)
    ops = operations.decode_ops(stack.model, batch, tokens)
    bandwidth = achieved(stack.card.bandwidth, stack.efficiency.bandwidth_fraction, "bandwidth fraction")
    compute = achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
    memory_s = read.total.value / bandwidth.value
    compute_s = ops.value / compute.value
    return DecodeStep(
        read=read,
        ops=ops,
        read_model=stack.model,
        memory_time=Result(memory_s, MS, formula="bytes read ÷ (bandwidth fraction × bandwidth)",
                           worked=f"{read.total.operand} ÷ {bandwidth.operand} = {MS.show(memory_s)}"),
        compute_time=Result(compute_s, MS, formula="step operations ÷ (MFU × dense peak)",
                            worked=f"{ops.operand} ÷ {compute.operand} = {MS.show(compute_s)}"),
    )


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
    """Whether, and at what batch, a decode step at this length turns compute-bound."""

    tokens: int
    batch: Result | None
    limit: Result
    ridge: Result

    @property
    def happens(self) -> bool:
        return self.batch is not None


LARGEST_BATCH = 1_000_000  # past this no card holds the batch, so the crossing is not reached


def compute_bound_batch(stack: Stack, tokens: int) -> Crossing:
    """Solve batch × ops per sequence ÷ rate = (weights + batch × cache per sequence) ÷ bandwidth.

    batch = ridge × weights ÷ (ops per sequence − ridge × cache per sequence), with the effective
    ridge (achieved rates); no batch exists when decode's intensity limit is below the ridge.
    """
    ridge = effective_ridge(stack)
    limit = decode_intensity_limit(stack, tokens)
    one = decode_step(stack, 1, tokens)
    per_sequence_ops, per_sequence_cache = one.ops.value, one.read.cache.value
    weights = one.read.weights.value
    spare = per_sequence_ops - ridge.value * per_sequence_cache
    if spare <= 0 or ridge.value * weights / spare > LARGEST_BATCH:
        return Crossing(tokens, None, limit, ridge)
    value = ridge.value * weights / spare
    shown_ridge = FLOP_PER_BYTE.precise(ridge.value, 8)
    batch = Result(value, COUNT, formula="ridge × weights ÷ (ops per sequence − ridge × cache per sequence)",
                   worked=(f"{shown_ridge} × {grouped(weights)} B ÷ ({grouped(per_sequence_ops)} FLOP − {shown_ridge} × "
                           f"{grouped(per_sequence_cache)} B) = {grouped(value)}"))
    return Crossing(tokens, batch, limit, ridge)


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
    """A decode step's reading and computing time, the step, and the throughput, against batch,
    at one length; with the batch where computing overtakes reading (if any within the range) and
    the batch the cache admits, as vertical markers. Curves and the rows of the chart's table."""
    steps = [decode_step(stack, batch, tokens) for batch in STEP_BATCHES]
    reading = [1000 * s.memory_time.value for s in steps]
    computing = [1000 * s.compute_time.value for s in steps]
    step = [1000 * s.time.value for s in steps]
    throughput = [s.tokens_per_second.value for s in steps]
    crossing = compute_bound_batch(stack, tokens)
    top = max(step)
    x = list(STEP_BATCHES)
    cross_x = [crossing.batch.value] * 2 if crossing.happens and crossing.batch.value <= STEP_BATCHES[-1] else []
    curves = [
        {"name": "reading: bytes ÷ achieved bandwidth", "x": x, "y": reading},
        {"name": "computing: operations ÷ achieved compute", "x": x, "y": computing},
        {"name": "decode step (the longer of the two)", "x": x, "y": step},
        {"name": "tokens per second, whole batch", "x": x, "y": throughput},
        {"name": "turns compute-bound", "x": cross_x, "y": [0, top] if cross_x else []},
        {"name": "the cache is full", "x": [admitted, admitted] if 0 < admitted <= STEP_BATCHES[-1] else [],
         "y": [0, top] if 0 < admitted <= STEP_BATCHES[-1] else []},
    ]
    rows = [[grouped(b), f"{reading[i]:.1f}", f"{computing[i]:.2f}", f"{step[i]:.1f}", grouped(throughput[i])]
            for i, b in enumerate(STEP_BATCHES)]
    return {"curves": curves, "rows": rows}


@dataclass(frozen=True)
class ChunkedPrefill:
    """A prompt prefilled in chunks that ride along with a running batch's decode steps."""

    prompt: int
    chunk: int
    decode: DecodeStep
    chunk_ops: Result
    rate: Result

    @property
    def mixed_step(self) -> Result:
        """A step that reads the batch's bytes once and does the batch's and the chunk's operations."""
        compute = (self.decode.ops.value + self.chunk_ops.value) / self.rate.value
        longer = max(self.decode.memory_time.value, compute)
        return Result(longer, MS, formula="max(reading time, (decode ops + chunk ops) ÷ achieved compute)",
                      worked=(f"max({self.decode.memory_time.operand}, ({self.decode.ops.operand} + "
                              f"{self.chunk_ops.operand}) ÷ {self.rate.operand}) = {MS.show(longer)}"))

    @property
    def free_tokens(self) -> Result:
        """Prompt tokens a memory-bound step can take on before computing outlasts reading."""
        spare = self.decode.memory_time.value - self.decode.compute_time.value
        per_token = 2 * operations.block_parameters(self.decode.read_model)
        if spare <= 0:
            return Result(0, TOKENS, formula="none: the step already computes longer than it reads",
                          worked=(f"computing ({self.decode.compute_time}) already outlasts reading "
                                  f"({self.decode.memory_time}): every prompt token lengthens the step"))
        value = spare * self.rate.value / per_token
        return Result(value, TOKENS, formula="(reading time − computing time) × achieved compute ÷ (2 × block parameters)",
                      worked=(f"({self.decode.memory_time.operand} − {self.decode.compute_time.operand}) × "
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
    return ChunkedPrefill(
        prompt=prompt,
        chunk=chunk,
        decode=decode_step(stack, batch, tokens),
        chunk_ops=operations.prefill_ops(stack.model, min(chunk, prompt)),
        rate=achieved(peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU"),
    )
