"""How long one engine step takes: every kind of kernel it runs, each priced as its roofline divided
by the share of it vLLM's kernels were measured to reach (calc.engine.kernels), plus a fixed cost per
step that the kernels do not account for.

A step carries some sequences decoding one token each and, under chunked prefill, chunks of prompts.
Its kernels, per GPU:

- the block matrices, once for every token in the step (the weights are read once, whatever the
  batch), at the measured share for that many tokens;
- the LM head for each sampled row (one per decoding sequence, one per prompt finishing);
- decode attention: a fixed time per layer and each sequence's cache at a measured share of bandwidth;
- prefill attention: each chunk's causal operations at a measured share of the dense peak;
- the norms, activation and embedding, which no table measures: their bytes at four fifths of the
  bandwidth plus 3 µs a call, the rule NVIDIA's aiconfigurator-core applies to them (its
  systems/<card>.yaml, mem_bw_empirical_scaling_factor and mem_empirical_constant_latency), and
  13.2 µs a prefill-attention call beyond the attention kernel's own table, which is what
  aiconfigurator's context-attention op (its source "mixed") adds on top of that table: its estimate
  of a 2,000-token prompt's attention on the H100, 3.172 ms for 32 layers, against the table's
  kernel read at that length (`ROTARY_AND_WRITE_S`; the rotary embedding and the cache write are the
  work it stands for);
- the step's fixed cost: scheduling, sampling and launching under CUDA graphs, the residual of a
  published single-sequence ITL fit after the modelled kernels (`OVERHEAD_MEASURED`).

The reader's calibration (calc.specs.stack.Efficiency) scales the measured shares: 1 is the measurement.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from ..specs.cards import Card, H100_SXM
from ..specs.models import LLAMA_3_1_8B, Model
from ..model.operations import attention_ops_per_position, block_parameters, head_parameters
from ..specs.precision import BF16, Precision
from ..core.arith import Expr, field, made_of, maximum, term, total
from ..core.units import FLOP_PER_BYTE, GB_MOVED, GFLOP, MICROSECONDS, MS, PERCENT, Result, given, grouped
from . import kernels, sharding

ELEMENTWISE_SHARE = 0.8
ELEMENTWISE_CALL_S = 3e-6
ROTARY_AND_WRITE_S = 13.2e-6
ELEMENTWISE_SOURCE = ("NVIDIA aiconfigurator-core 0.12.0: ops it has no table for take bytes ÷ (0.8 × bandwidth) + 3 µs "
                      "(systems/<card>.yaml, mem_bw_empirical_scaling_factor and mem_empirical_constant_latency); two "
                      "add + RMSNorm and one SiLU·mul a layer, the embedding once a step; and 13.2 µs a prefill-attention "
                      "call beyond the kernel's table, what its context-attention op (source 'mixed') adds: 3.172 ms for "
                      "a 2,000-token prompt's 32 layers on the H100 against the table's kernel")
# The fixed cost per step: a single sequence's inter-token latency, measured end to end, less the
# kernels' time for that step. vLLM's blog fitted ITL = slope × input length + intercept over
# prompts of 256 to 125,000 tokens at concurrency 1 (128 output tokens) on one H100 with FlashAttention 3.
OVERHEAD_MEASURED = {"intercept_s": 6.44e-3, "slope_s_per_token": 4.37e-8, "release": "0.19.1",
                     "source": ("vLLM blog, 'The State of FP8 KV-Cache and Attention Quantization in vLLM' (22 April "
                                "2026), Llama-3.1-8B on one H100, vLLM 0.19.1, `vllm bench serve` at concurrency 1: "
                                "'The fitted ITL slope drops from 4.37e-05 to 2.37e-05 ms/token, while the intercept "
                                "changes only from 6.44 to 6.58 ms' (bf16 cache first), "
                                "https://github.com/vllm-project/vllm-project.github.io/blob/main/_posts/2026-04-22-fp8-kvcache.md")}


# the per-call constants as inputs a worked line can record
_CALL = given(ELEMENTWISE_CALL_S, MICROSECONDS, "a call of an op no table measures (aiconfigurator-core)")
_ROTARY_AND_WRITE = given(ROTARY_AND_WRITE_S, MICROSECONDS, "a prefill-attention call beyond the kernel's table "
                                                            "(aiconfigurator-core's context-attention op)")
_OVERHEAD_ITL = given(OVERHEAD_MEASURED["intercept_s"], MS, OVERHEAD_MEASURED["source"])


@dataclass(frozen=True)
class Group:
    """One kind of a step's kernels: what it reads and computes, its roofline at the datasheet's rates,
    the measured share of that roofline it reaches, and a fixed time for its calls."""

    name: str
    bytes: Result
    ops: Result
    bandwidth: Result
    compute: Result
    efficiency: Result
    fixed: Result
    scale: float = 1.0

    @cached_property
    def reading(self) -> Result:
        return (term(self.bytes) / term(self.bandwidth, str(self.bandwidth))).result(MS, "bytes ÷ datasheet bandwidth")

    @cached_property
    def computing(self) -> Result:
        return (term(self.ops) / term(self.compute, str(self.compute))).result(MS, "operations ÷ dense peak")

    @property
    def bound(self) -> str:
        return "reading" if self.reading.value >= self.computing.value else "computing"

    @cached_property
    def roofline(self) -> Result:
        return maximum(term(self.reading), term(self.computing)).result(
            MS, "the longer of reading and computing at the datasheet's rates")

    @cached_property
    def time(self) -> Result:
        # (fixed + roofline ÷ share) ÷ scale, each part written only where it is not 0 or 1: adding a zero
        # fixed time and dividing by a scale of 1 change no bit of the value
        time: Expr = term(self.roofline) / term(self.efficiency)
        if self.fixed.value:
            time = term(self.fixed) + time
        if self.scale != 1:
            time = time / term(self.scale, f"{self.scale:g}")
        return time.result(MS, "(fixed time + roofline ÷ measured share) ÷ calibration")

    @cached_property
    def intensity(self) -> Result:
        if not self.bytes.value:  # nothing read: the ratio is taken as 0
            return Result(0.0, FLOP_PER_BYTE, formula="operations ÷ bytes read",
                          worked=f"{self.ops.operand} ÷ {self.bytes.operand} = {FLOP_PER_BYTE.show(0.0)}",
                          inputs=made_of(self.ops, self.bytes))
        return (term(self.ops) / term(self.bytes)).result(FLOP_PER_BYTE, "operations ÷ bytes read")


def no_time(name: str) -> Result:
    return Result(0, MS, formula=f"no {name}", worked="0 ms")


@dataclass(frozen=True)
class Hardware:
    """What a step's kernels run on: the card, the weights' precision and the reader's calibration."""

    card: Card
    weights: Precision
    kv: Precision
    compute_scale: float = 1.0
    bandwidth_scale: float = 1.0

    @property
    def bandwidth(self) -> Result:
        return self.card.bandwidth

    @property
    def peak(self) -> Result:
        return kernels.peak_compute(self.card, self.weights)

    @property
    def attention_peak(self) -> Result:
        """Attention multiplies activations in bf16 whatever the weights' format."""
        return self.card.bf16_dense

    def scale(self, reading: float, computing: float) -> float:
        return self.bandwidth_scale if reading >= computing else self.compute_scale


def _matrix_load(hardware: Hardware, model: Model, tokens: int, tensor: int, pipeline: int) -> tuple[float, float, float]:
    """(weight bytes, activation bytes, operations) of the block matrices for `tokens` tokens on one GPU."""
    layers = sharding.stage_layers(model, pipeline)
    share = layers / model.num_hidden_layers
    weights = sharding.matrices_per_gpu(model, tensor, pipeline).value * hardware.weights.bytes
    activations = tokens * _activation_width(model, tensor) * layers * BF16.bytes
    ops = 2 * tokens * block_parameters(model) * share / tensor
    return weights, activations, ops


def _head_bytes(hardware: Hardware, model: Model) -> float:
    return head_parameters(model) * (BF16.bytes if hardware.weights.quantised else hardware.weights.bytes)


def matrices(hardware: Hardware, model: Model, tokens: int, tensor: int = 1, pipeline: int = 1) -> Group:
    """The block matrices for `tokens` tokens: the weights one GPU holds, read once."""
    weights, activations, ops = _matrix_load(hardware, model, tokens, tensor, pipeline)
    per_token = int(ops / 2 / tokens) if tokens else 0
    # the weights' bytes are shown as one number: the line kept, the parameters it counts recorded
    return _group(hardware, "matrix multiplies", weights + activations, ops,
                  kernels.gemm_efficiency(hardware.card, hardware.weights, max(tokens, 1)), no_time("fixed time"),
                  bytes_worked=(f"{grouped(int(weights))} B of weights + {grouped(int(activations))} B of activations "
                                f"= {GB_MOVED.show(weights + activations)}"),
                  ops_worked=f"2 × {grouped(tokens)} × {grouped(per_token)} = {GFLOP.show(ops)}",
                  bytes_inputs=made_of(sharding.matrices_per_gpu(model, tensor, pipeline)))


def _head_precision(hardware: Hardware) -> Precision:
    """The LM head stays in bf16 under quantised weights (calc.specs.precision.weight_bytes)."""
    return BF16 if hardware.weights.quantised else hardware.weights


def head(hardware: Hardware, model: Model, rows: int, tensor: int = 1) -> Group:
    """The LM head for `rows` sampled positions: one per decoding sequence, one per prompt finishing."""
    weights = _head_bytes(hardware, model) / tensor
    ops = 2 * rows * head_parameters(model) / tensor
    efficiency = kernels.gemm_efficiency(hardware.card, _head_precision(hardware), max(rows, 1))
    # the head's parameters are shown as one number: the lines kept, the config fields they count recorded
    return _group(hardware, "the LM head", weights, ops, efficiency, no_time("fixed time"),
                  compute=kernels.peak_compute(hardware.card, _head_precision(hardware)),
                  bytes_worked=f"{grouped(int(weights))} B = {GB_MOVED.show(weights)}",
                  ops_worked=f"2 × {grouped(rows)} × {grouped(head_parameters(model) // tensor)} = {GFLOP.show(ops)}",
                  bytes_inputs=_head_fields(model), ops_inputs=_head_fields(model))


@lru_cache(maxsize=64)
def _head_fields(model: Model) -> tuple[Result, ...]:
    """What the LM head's parameters count: vocabulary × hidden size, as the config names them."""
    return made_of(field(model, "vocab_size"), field(model, "hidden_size"))


def decode_attention(hardware: Hardware, model: Model, sequences: int, held: float, tensor: int = 1,
                     pipeline: int = 1, queries: int = 1) -> Group:
    """Attention for `sequences` decoding sequences holding `held` tokens between them (a window
    already applied): a fixed time per layer, and each sequence's cache read once for its `queries`
    new positions (one when decoding; the drafts and the last token when verifying speculation)."""
    layers = sharding.stage_layers(model, pipeline)
    per_token = sharding.cache_per_token(model, hardware.kv, tensor, pipeline)
    cached = term(held, f"{grouped(int(held))} tokens") * term(per_token, f"{grouped(per_token.value)} B")
    cache = cached.value
    ops = queries * held * attention_ops_per_position(model).value * layers / model.num_hidden_layers / tensor
    floor = kernels.decode_floor(hardware.card)
    fixed = ((term(_layers(model, layers), str(layers)) * term(floor)).result(MS, "layers × the smallest call")
             if sequences else Result(0.0, MS, formula="layers × the smallest call", worked="no sequences"))
    return _group(hardware, "decode attention", cache, ops, _decode_attention_share(hardware, cache, ops), fixed,
                  compute=hardware.attention_peak, bytes_made=cached, ops_worked=f"{GFLOP.show(ops)}")


def _layers(model: Model, layers: int) -> Result | int:
    """The layers a stage runs: the config's own field when the stage is the whole model."""
    return field(model, "num_hidden_layers") if layers == model.num_hidden_layers else layers


def _decode_attention_share(hardware: Hardware, cache: float, ops: float) -> Result:
    """Reading the cache, the measured decode kernel's share of bandwidth; once its operations take
    longer, the prefill kernel's share at the measured decode length."""
    if cache / hardware.bandwidth.value >= ops / hardware.attention_peak.value:
        return kernels.decode_share(hardware.card)
    return kernels.prefill_share(hardware.card, kernels.measured_kernels.CACHED)


def equivalent_prompt(chunk: int, done: int) -> int:
    """The prompt whose causal attention does the work of a `chunk` after `done` tokens: s with
    s(s + 1) ÷ 2 = chunk × done + chunk(chunk + 1) ÷ 2."""
    positions = chunk * done + chunk * (chunk + 1) / 2
    return max(1, round(((8 * positions + 1) ** 0.5 - 1) / 2))


def prefill_attention(hardware: Hardware, model: Model, chunks: tuple[tuple[int, int], ...], tensor: int = 1,
                      pipeline: int = 1) -> Group:
    """Causal attention for prompt chunks, each (tokens in the chunk, tokens of its prompt already
    done): each chunk's operations at the share measured for a prompt of the same work."""
    layers = sharding.stage_layers(model, pipeline)
    per_position = attention_ops_per_position(model).value * layers / model.num_hidden_layers / tensor
    floor = kernels.decode_floor(hardware.card).value
    ops = time_at_share = 0.0
    calls = 0
    shares = []
    for chunk, done in chunks:
        positions = _positions(model, chunk, done)
        chunk_ops = per_position * positions
        measured = kernels.prefill_share(hardware.card, equivalent_prompt(chunk, done))
        shares.append(measured)
        share = measured.value
        time_at_share += max(layers * floor, chunk_ops / (share * hardware.attention_peak.value))
        ops += chunk_ops
        calls += layers
    per_token = sharding.cache_per_token(model, hardware.kv, tensor, pipeline).value
    written = sum(chunk for chunk, _ in chunks) * per_token
    roofline = max(written / hardware.bandwidth.value, ops / hardware.attention_peak.value)
    efficiency = roofline / time_at_share if time_at_share else 1.0
    return _group(hardware, "prefill attention", written, ops,
                  Result(efficiency, PERCENT, formula="the measured share for each chunk's work",
                         worked=f"{PERCENT.show(efficiency)} of the dense peak", inputs=made_of(*shares)),
                  (term(calls, str(calls)) * term(_ROTARY_AND_WRITE, MICROSECONDS.show(ROTARY_AND_WRITE_S))).result(
                      MS, "layers × 13.2 µs per chunk"),
                  compute=hardware.attention_peak, bytes_worked=f"{GB_MOVED.show(written)} written",
                  ops_worked=f"{GFLOP.show(ops)}")


def _positions(model: Model, chunk: int, done: int) -> float:
    window = model.sliding_window or (done + chunk)
    if done + chunk <= window:
        return chunk * done + chunk * (chunk + 1) / 2
    return sum(min(done + t, window) for t in range(1, chunk + 1))


def _elementwise_load(model: Model, tokens: int, tensor: int, pipeline: int, with_embedding: bool) -> tuple[float, int]:
    """(bytes moved, calls) of the norms, activation and embedding for `tokens` tokens on one GPU."""
    layers = sharding.stage_layers(model, pipeline)
    width = 2 * 4 * model.hidden_size + 3 * _mlp_width(model) // tensor
    gathered = model.hidden_size if with_embedding else 0
    return tokens * (layers * width + gathered) * BF16.bytes, 3 * layers + (1 if with_embedding else 0)


def elementwise(hardware: Hardware, model: Model, tokens: int, tensor: int = 1, pipeline: int = 1,
                with_embedding: bool = True) -> Group:
    """Two add + RMSNorm and one SiLU·mul a layer, and (unless it is priced apart) the embedding once
    a step."""
    layers = sharding.stage_layers(model, pipeline)
    width = 2 * 4 * model.hidden_size + 3 * _mlp_width(model) // tensor
    gathered = model.hidden_size if with_embedding else 0
    moved, calls = _elementwise_load(model, tokens, tensor, pipeline, with_embedding)
    name = "norms and activation with the embedding" if with_embedding else "norms and activation"
    # tokens × (layers × width + embedding row) × 2 B, in _elementwise_load's order
    per_token = term(_layers(model, layers), str(layers)) * term(width)
    if gathered:
        per_token = per_token + term(field(model, "hidden_size"), grouped(gathered))
    # the line brackets the per-token width even when it is one product: the order it is computed in
    made = term(tokens) * Expr(per_token.value, f"({per_token.text})", per_token.inputs) * term(BF16.bytes, "2 B")
    return _group(hardware, name, moved, 0, given(ELEMENTWISE_SHARE, PERCENT, "aiconfigurator-core's share for unmeasured ops"),
                  (term(calls, str(calls)) * term(_CALL, "3 µs")).result(MS, "calls × 3 µs"),
                  bytes_made=made, ops_worked="0 GFLOP")


def embedding(hardware: Hardware, model: Model, tokens: int) -> Group:
    """The embedding's rows for `tokens` tokens gathered and written, at the unmeasured ops' rule."""
    made = 2 * term(tokens) * term(field(model, "hidden_size"), grouped(model.hidden_size)) * term(BF16.bytes, "2 B")
    return _group(hardware, "embedding", made.value, 0,
                  given(ELEMENTWISE_SHARE, PERCENT, "aiconfigurator-core's share for unmeasured ops"),
                  (term(1) * term(_CALL, "3 µs")).result(MS, "one call × 3 µs", shown="0.003 ms"),
                  bytes_made=made, ops_worked="0 GFLOP")


def _mlp_width(model: Model) -> int:
    if model.is_mixture_of_experts:
        return (model.moe_intermediate_size or model.intermediate_size) * model.num_experts_per_tok
    return model.intermediate_size


def _activation_width(model: Model, tensor: int) -> int:
    """Inputs and outputs of one layer's matrix multiplies, per token: Σ (N + K) on one GPU."""
    q = model.num_attention_heads * model.head_dim // tensor
    kv = max(model.num_key_value_heads // tensor, 1) * model.head_dim
    mlp = _mlp_width(model) // tensor
    hidden = model.hidden_size
    return (q + 2 * kv + hidden) + (hidden + q) + (2 * mlp + hidden) + (hidden + mlp)


def _group(hardware: Hardware, name: str, moved: float, ops: float, efficiency: Result, fixed: Result,
           compute: Result | None = None, bytes_worked: str = "", ops_worked: str = "",
           bytes_made: Expr | None = None, bytes_inputs: tuple[Result, ...] = (),
           ops_inputs: tuple[Result, ...] = ()) -> Group:
    """`bytes_made`, where given, is the arithmetic of `moved` (the same value), and writes its line;
    otherwise `bytes_worked` is the line, resting on `bytes_inputs`."""
    peak = compute or hardware.peak
    reading, computing = moved / hardware.bandwidth.value, ops / peak.value
    moved_result = (bytes_made.result(GB_MOVED, "bytes moved") if bytes_made is not None else
                    Result(moved, GB_MOVED, formula="bytes moved", worked=bytes_worked or GB_MOVED.show(moved),
                           inputs=bytes_inputs))
    return Group(name, moved_result,
                 Result(ops, GFLOP, formula="operations", worked=ops_worked or GFLOP.show(ops), inputs=ops_inputs),
                 hardware.bandwidth, peak, efficiency, fixed, hardware.scale(reading, computing))


@lru_cache(maxsize=1)
def overhead() -> Result:
    """The fixed cost of a step: the measured single-sequence ITL at no context, less the kernels'
    time for that step on the reference shapes (H100 SXM, Llama 3.1 8B, bf16)."""
    hardware = Hardware(H100_SXM, BF16, BF16)
    model = LLAMA_3_1_8B
    kernel_time = total(term(g.time) for g in (matrices(hardware, model, 1), head(hardware, model, 1),
                                               decode_attention(hardware, model, 1, 0),
                                               elementwise(hardware, model, 1)))\
        .result(MS, "the kernels of a one-token step with no context, on the reference shapes")
    return (term(_OVERHEAD_ITL) - term(kernel_time)).result(MS, "measured ITL at no context − the kernels of that step")


class Costs:
    """One split's step reduced to numbers, for the simulation's inner loop: the same arithmetic as the
    groups above without building their worked lines, memoised by the token counts that recur."""

    def __init__(self, hardware: Hardware, model: Model, tensor: int = 1, pipeline: int = 1):
        self.hardware, self.model, self.tensor, self.pipeline = hardware, model, tensor, pipeline
        layers = sharding.stage_layers(model, pipeline)
        self.layers = layers
        attention = decode_attention(hardware, model, 1, 1, tensor, pipeline)
        self.per_held_s = attention.time.value - attention.fixed.value / attention.scale
        self.attention_fixed_s = attention.fixed.value / attention.scale
        self.attention_floor_s = attention.fixed.value
        self.overhead_s = overhead().value
        self.floor_s = kernels.decode_floor(hardware.card).value
        self.per_position = attention_ops_per_position(model).value * layers / model.num_hidden_layers / tensor
        self.peak = hardware.attention_peak.value
        self.per_cached = sharding.cache_per_token(model, hardware.kv, tensor, pipeline).value
        self.per_written = self.per_cached / hardware.bandwidth.value
        self.decode_share = kernels.decode_share(hardware.card).value
        self.cached_share = kernels.prefill_share(hardware.card, kernels.measured_kernels.CACHED).value
        # The block matrices' and the norms' loads are linear in the tokens: kept per token.
        self.weights, self.activations_per_token, self.ops_per_token = _matrix_load(hardware, model, 1, tensor, pipeline)
        self.moved_per_token, self.elementwise_calls = _elementwise_load(model, 1, tensor, pipeline, True)
        self.gemm_curve = kernels.gemm_curve(hardware.card, hardware.weights)
        self.prefill_curve = kernels.prefill_curve(hardware.card)
        self.ridge_ratio = kernels.ridge_ratio(hardware.card, hardware.weights)
        self.bandwidth, self.matrix_peak = hardware.bandwidth.value, hardware.peak.value
        self._blocks: dict[int, float] = {}
        self._head: dict[int, float] = {}
        self._chunks: dict[tuple[int, int], float] = {}

    def blocks(self, tokens: int) -> float:
        """The block matrices, norms, activation and embedding for `tokens` tokens."""
        known = self._blocks.get(tokens)
        if known is None:
            hw = self.hardware
            bandwidth = self.bandwidth
            reading = (self.weights + tokens * self.activations_per_token) / bandwidth
            computing = tokens * self.ops_per_token / self.matrix_peak
            share = self.gemm_curve(max(tokens, 1) * self.ridge_ratio)
            matrix = max(reading, computing) / share / hw.scale(reading, computing)
            moved = tokens * self.moved_per_token
            norms = (self.elementwise_calls * ELEMENTWISE_CALL_S + moved / bandwidth / ELEMENTWISE_SHARE) / hw.bandwidth_scale
            known = self._blocks[tokens] = matrix + norms
        return known

    def decode_attention(self, sequences: int, held: float, queries: int = 1) -> float:
        """decode_attention's time: `sequences` holding `held` tokens between them, `queries` new
        positions each."""
        if not sequences:
            return 0.0
        hw = self.hardware
        reading = held * self.per_cached / self.bandwidth
        computing = queries * held * self.per_position / self.peak
        if reading >= computing:
            seconds, scale = reading / self.decode_share, hw.bandwidth_scale
        else:
            seconds, scale = computing / self.cached_share, hw.compute_scale
        return (self.attention_floor_s + seconds) / scale

    def head(self, rows: int) -> float:
        if rows not in self._head:
            self._head[rows] = head(self.hardware, self.model, rows, self.tensor).time.value if rows else 0.0
        return self._head[rows]

    def prefill_attention(self, chunk: int, done: int) -> float:
        """One chunk's causal attention, as prefill_attention prices it."""
        known = self._chunks.get((chunk, done))
        if known is None:
            positions = chunk * done + chunk * (chunk + 1) / 2
            share = self.prefill_curve(max(equivalent_prompt(chunk, done), 1))
            computing = self.per_position * positions / (share * self.peak)
            seconds = max(self.layers * self.floor_s, computing, chunk * self.per_written) + self.layers * ROTARY_AND_WRITE_S
            known = self._chunks[(chunk, done)] = seconds / self.hardware.compute_scale
        return known
