"""The reference stack's memory ladder and step times redone by hand, for the tests to check calc
against: a second implementation of the rules, from the config's shapes, the datasheet and the measured
kernel times (calc/engine/measured_kernels.py is data, not code under test), sharing nothing with calc.

Every rule here is the one calc.engine states: each kind of kernel is its roofline at the datasheet's
rates divided by the share vLLM's kernels reached when measured, plus a fixed cost per step set on a
published single-sequence ITL; the ladder is vLLM 0.33.0's accounting.
"""
from __future__ import annotations

import math

from calc.engine import measured_kernels
from calc.specs.models import LLAMA_3_1_8B_CONFIG as C

GiB = 2 ** 30
PEAK, BANDWIDTH = 989.4e12, 3.35e12  # H100 SXM dense bf16, HBM3 (datasheet)
LAYERS, HIDDEN, INTER, VOCAB = C["num_hidden_layers"], C["hidden_size"], C["intermediate_size"], C["vocab_size"]
HEADS, KV_HEADS = C["num_attention_heads"], C["num_key_value_heads"]
HEAD_DIM = HIDDEN // HEADS
SHAPES = (((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN), (HIDDEN, HEADS * HEAD_DIM), (2 * INTER, HIDDEN), (HIDDEN, INTER))
LAYER_PARAMS = sum(n * k for n, k in SHAPES)
HEAD_PARAMS = VOCAB * HIDDEN
PARAMS = 8_030_261_248
PER_TOKEN = 2 * LAYERS * KV_HEADS * HEAD_DIM * 2  # bf16 cache bytes per token
PER_POSITION = 4 * HEADS * HEAD_DIM  # attention operations per position, one layer
H100 = measured_kernels.CARDS["h100-sxm"]


def _log_interpolate(points: list[tuple[float, float]], x: float) -> float:
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            return y0 + (math.log2(x) - math.log2(x0)) / (math.log2(x1) - math.log2(x0)) * (y1 - y0)
    return points[-1][1]


def _roofline(tokens: float, params: int, width: int) -> float:
    moved = 2 * params + 2 * tokens * width
    return max(moved / BANDWIDTH, 2 * tokens * params / PEAK)


def gemm_share(tokens: float) -> float:
    """The measured share of the roofline for one layer's four matrix multiplies at `tokens` tokens."""
    width = sum(n + k for n, k in SHAPES)
    points = [(m, _roofline(m, LAYER_PARAMS, width) / t) for m, t in zip(measured_kernels.TOKENS, H100["gemm"])]
    return _log_interpolate(points, tokens)


PEAK_FP8 = 1978.9e12  # H100 SXM dense fp8 (datasheet)


def gemm_share_fp8(tokens: float) -> float:
    """The same for per-tensor fp8 weights (W8A8): one byte a weight, bf16 activations in and out, the fp8
    peak, against the fp8 kernel's measured times."""
    width = sum(n + k for n, k in SHAPES)
    def roofline(m: float) -> float:
        return max((LAYER_PARAMS + 2 * m * width) / BANDWIDTH, 2 * m * LAYER_PARAMS / PEAK_FP8)
    points = [(m, roofline(m) / t) for m, t in zip(measured_kernels.TOKENS, H100["gemm_fp8"])]
    return _log_interpolate(points, tokens)


def _shapes(config: dict) -> tuple[tuple[int, int], ...]:
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_dim = config.get("head_dim", hidden // heads)
    inter = config["intermediate_size"]
    return (((heads + 2 * config["num_key_value_heads"]) * head_dim, hidden), (hidden, heads * head_dim),
            (2 * inter, hidden), (hidden, inter))


def cache_per_token(config: dict) -> int:
    """bf16 keys and values, every layer, one token."""
    head_dim = config.get("head_dim", config["hidden_size"] // config["num_attention_heads"])
    return 2 * config["num_hidden_layers"] * config["num_key_value_heads"] * head_dim * 2


def matrices_s(tokens: int, config: dict = C) -> float:
    """The layers' block matrices for `tokens` tokens, at the share measured on the 8B's layer at as many tokens."""
    shapes = _shapes(config)
    params, width = sum(n * k for n, k in shapes), sum(n + k for n, k in shapes)
    return config["num_hidden_layers"] * _roofline(tokens, params, width) / gemm_share(tokens)


def head_s(rows: int, config: dict = C) -> float:
    params = config["vocab_size"] * config["hidden_size"]
    return max(2 * params / BANDWIDTH, 2 * rows * params / PEAK) / gemm_share(rows)


def norms_s(tokens: int, embedding: bool = True, config: dict = C) -> float:
    """Two add + RMSNorm and a SiLU·mul a layer (and the embedding): bytes at 0.8 of bandwidth + 3 µs each."""
    layers, hidden = config["num_hidden_layers"], config["hidden_size"]
    moved = tokens * (layers * (8 * hidden + 3 * config["intermediate_size"]) + (hidden if embedding else 0)) * 2
    return moved / (0.8 * BANDWIDTH) + (3 * layers + (1 if embedding else 0)) * 3e-6


def decode_attention_s(held_total: float, config: dict = C, queries: int = 1) -> float:
    """Each sequence's cache read once, at the share the measured decode kernel reaches, plus the
    smallest call per layer; `queries` positions attend per sequence, which keeps attention reading-bound
    for these shapes (asserted)."""
    floor = H100["smallest"]
    batch, seconds = H100["decode"][-1]
    share = batch * measured_kernels.CACHED * 2 * KV_HEADS * HEAD_DIM * 2 / ((seconds - floor) * BANDWIDTH)
    head_dim = config.get("head_dim", config["hidden_size"] // config["num_attention_heads"])
    ops = queries * held_total * 4 * config["num_attention_heads"] * head_dim * config["num_hidden_layers"]
    assert ops / PEAK <= held_total * cache_per_token(config) / BANDWIDTH
    return config["num_hidden_layers"] * floor + held_total * cache_per_token(config) / (share * BANDWIDTH)


def pass_s(config: dict, batch: int, positions: int, held: int, fixed: bool = True) -> float:
    """One forward pass of `config`'s model for `batch` sequences holding `held` tokens each, over
    `positions` new positions each (every one scored by the LM head), with the step's fixed cost or
    without it (a draft pass inside the step)."""
    tokens = batch * positions
    kernels = (matrices_s(tokens, config) + head_s(tokens, config) + norms_s(tokens, config=config)
               + decode_attention_s(batch * held, config, positions))
    return kernels + (overhead_s() if fixed else 0.0)


def prefill_attention_s(prompt: int, done: int = 0) -> float:
    """Causal attention for `prompt` new tokens after `done` cached ones, at the share measured for the
    whole prompt of the same work (s with s(s + 1) ÷ 2 positions)."""
    floor = H100["smallest"]
    points = [(s, PER_POSITION * s * (s + 1) / 2 / (t * PEAK)) for s, t in H100["prefill"]]
    positions = prompt * done + prompt * (prompt + 1) / 2
    same_work = max(1, round(((8 * positions + 1) ** 0.5 - 1) / 2))
    ops = PER_POSITION * positions
    return LAYERS * max(floor, ops / (_log_interpolate(points, same_work) * PEAK)) + LAYERS * 13.2e-6


def overhead_s() -> float:
    """vLLM's blog: one sequence's ITL at no context is 6.44 ms; the kernels of that step leave the rest."""
    return 6.44e-3 - (matrices_s(1) + head_s(1) + decode_attention_s(0) + norms_s(1))


def prefill_s(prompt: int, cached: int = 0) -> float:
    """A prompt prefilled in one step; with `cached` tokens found in the prefix cache, only the rest."""
    tokens = prompt - cached
    embedding = 2 * tokens * HIDDEN * 2 / (0.8 * BANDWIDTH) + 3e-6
    return (embedding + matrices_s(tokens) + prefill_attention_s(tokens, cached) + norms_s(tokens, embedding=False)
            + head_s(1) + overhead_s())


def decode_step_s(batch: int, held: float) -> float:
    """`batch` sequences holding `held` tokens each; a fractional mean batch multiplies as the whole
    batch above it and reads its exact cache."""
    whole = max(math.ceil(batch), 1)
    return matrices_s(whole) + head_s(whole) + decode_attention_s(batch * held) + norms_s(whole) + overhead_s()


def kv_budget(utilisation: float = 0.9, total_gib: float = 79.19, tokens: int = 8192, seqs: int = 1024,
              graphs_gib: float = 0.84) -> float:
    """vLLM 0.33.0 on the reference card: ⌈total × utilisation⌉ − weights and rotary table − activation
    peak − non-torch − the V2 runner's penalty state − CUDA graphs."""
    pool = math.ceil(total_gib * GiB * utilisation)
    weights = 2 * PARAMS + C["max_position_embeddings"] * HEAD_DIM * 2
    per_logit = 1.89 * GiB / (1024 * VOCAB)
    activation = max(tokens * (3 * INTER + 4 * HIDDEN) * 2, min(tokens, seqs) * VOCAB * per_logit)
    return pool - weights - activation - 0.25 * GiB - runner_state(seqs) - graphs_gib * GiB


def runner_state(seqs: int = 1024, vocab: int = VOCAB) -> int:
    """vllm/v1/worker/gpu/sample/penalties.py: an int32 count per vocabulary entry and an int32 word per
    32 entries of the prompt's mask, for every sequence the runner can hold."""
    return seqs * (vocab + -(-vocab // 32)) * 4


def token_capacity(budget: float, limit: int = 8192, block: int = 16) -> int:
    blocks = int(budget // (block * PER_TOKEN))
    per_request = -(-limit // block)
    return int(blocks / per_request * limit)


def mixed_step_s(batch: int, held: int, chunk: int) -> float:
    """`batch` sequences decoding at `held` tokens each and one fresh prompt chunk of `chunk` tokens."""
    return (matrices_s(batch + chunk) + head_s(batch) + decode_attention_s(batch * held)
            + prefill_attention_s(chunk) + norms_s(batch + chunk) + overhead_s())


def achieved_compute() -> float:
    """The matrix multiplies' share of the dense peak at the typical prompt's 2,000 tokens, × peak."""
    return gemm_share(2000) * PEAK


def achieved_bandwidth() -> float:
    """Their share of bandwidth at one token, × bandwidth."""
    return gemm_share(1) * BANDWIDTH


NON_TORCH_GIB = {1: 0.25, 2: 2.07, 4: 2.13, 8: 2.13, 16: 2.13}  # vLLM 0.19.0's logs on H100s, by tensor-parallel degree


def profile_reserve(config: dict, tp: int = 1, tokens: int = 8192, seqs: int = 1024, eager: bool = False,
                    pp: int = 1) -> float:
    """What vLLM 0.33.0's profile takes besides the weights: the activation peak (the larger of the
    forward pass over the token budget and the sampler's rows of logits), non-torch growth, the V2
    runner's penalty state, and the CUDA-graph estimate (0.84 GiB at 32 layers a GPU, 1.70 at 80, a line through the two)."""
    per_logit = 1.89 * GiB / (1024 * 128_256)
    experts = config.get("num_experts_per_tok", 1) if config.get("moe_intermediate_size") or \
        config.get("num_local_experts", 1) > 1 else 1
    widest = config.get("moe_intermediate_size") or config["intermediate_size"]
    mlp = widest * experts if experts > 1 else config["intermediate_size"]
    forward = tokens * (3 * (mlp // tp) + 4 * config["hidden_size"]) * 2
    sampler = min(tokens, seqs) * config["vocab_size"] * per_logit
    layers = -(-config["num_hidden_layers"] // pp)
    graphs = 0 if eager else (0.84 + (1.70 - 0.84) * (layers - 32) / 48) * GiB
    non_torch = 0.07 if tp == 1 and pp > 1 else NON_TORCH_GIB[tp]
    return max(forward, sampler) + non_torch * GiB + runner_state(seqs, config["vocab_size"]) + graphs


def weights_loaded(config: dict, tp: int = 1) -> float:
    """A Llama-shaped model's bf16 weights on one GPU of `tp`, as vLLM shards them: block matrices split
    (K and V copied once the GPUs outnumber the KV heads), each table a slice of the vocabulary padded to
    64, norms whole; with the rotary table every GPU keeps."""
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    head = hidden // config["num_attention_heads"]
    kv_heads = config["num_key_value_heads"]
    projections = layers * 2 * hidden * kv_heads * head
    matrices = layers * (hidden * hidden * 2 + 3 * hidden * config["intermediate_size"]) + projections
    split = matrices / tp if tp <= kv_heads else (matrices - projections) / tp + projections / kv_heads
    padded = -(-config["vocab_size"] // 64) * 64
    tables = 2 * -(-padded // tp) * hidden
    norms = layers * 2 * hidden + hidden
    return split * 2 + (tables + norms) * 2 + config["max_position_embeddings"] * head * 2
