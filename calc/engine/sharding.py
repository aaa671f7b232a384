"""What each GPU holds when vLLM splits a model: the block matrices across tensor-parallel ranks
(columns of q, k, v, gate and up; rows of o and down), the embedding and LM head by vocabulary after
padding it to a multiple of 64 (VOCAB_SOURCE), norms replicated, KV heads split while there are at
least as many as ranks and replicated past that (SPLIT_SOURCE), whole layers per pipeline stage (the
busiest stage is the one priced), and the rotary table every rank keeps beside its weights. A latent
(MLA) cache has a single head, so every rank keeps all of it."""
from __future__ import annotations

from ..model.anatomy import count_parameters
from ..specs.models import Model
from ..specs.precision import BF16, Precision
from ..core.units import BYTES, COUNT, GIB_HELD, KIB_HELD, Result, grouped, plain

VOCAB_PADDING = 64
VOCAB_SOURCE = ("vLLM, vllm/model_executor/layers/vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE = 64; "
                "VocabParallelEmbedding and ParallelLMHead each hold a slice of the padded vocabulary per "
                "tensor-parallel rank, https://github.com/vllm-project/vllm")
SPLIT_SOURCE = ("vLLM: ModelConfig.verify_with_parallel_config refuses a tensor-parallel size that does not divide "
                "the attention heads; QKVParallelLinear (vllm/model_executor/layers/linear.py) gives each rank "
                "kv_heads ÷ tp heads when tp < kv_heads and one head replicated tp ÷ kv_heads times otherwise, "
                "and divide() insists each quotient is whole, https://github.com/vllm-project/vllm")
ROTARY_SOURCE = ("vllm/model_executor/layers/rotary_embedding/base.py, RotaryEmbedding.__init__: a cos_sin_cache buffer "
                 "of max_position_embeddings × rotary dimension in the model's dtype, one per model "
                 "(rotary_embedding/__init__.py, get_rope, shares it through _ROPE_DICT) (vLLM 0.33.0)")


def stage_layers(model: Model, pipeline: int) -> int:
    """Layers on the busiest stage: an uneven split leaves one stage a layer heavier."""
    return -(-model.num_hidden_layers // pipeline)


def kv_heads_per_rank(model: Model, tensor: int) -> int:
    if model.is_latent:
        return 1
    return max(1, model.num_key_value_heads // tensor)


def kv_copies(model: Model, tensor: int) -> Result:
    """How many ranks hold each KV head: 1 while they are split, more once they are replicated."""
    if model.is_latent:
        return Result(tensor, COUNT, formula="every rank: a latent cache has one head",
                      worked=f"a latent cache has one head, so all {tensor} ranks hold it")
    kv = model.num_key_value_heads
    if tensor < kv:
        return Result(1, COUNT, formula="1 while tp < kv_heads",
                      worked=f"{tensor} GPUs split {kv} KV heads: each head is held once")
    copies = tensor // kv
    return Result(copies, COUNT, formula="tp ÷ kv_heads once tp ≥ kv_heads", worked=f"{tensor} ÷ {kv} = {copies}")


def _stage(model: Model, pipeline: int) -> str:
    """The pipeline factor in a worked line, or nothing at one stage."""
    return f" × {stage_layers(model, pipeline)} ÷ {model.num_hidden_layers}" if pipeline > 1 else ""


def matrices_per_gpu(model: Model, tensor: int, pipeline: int) -> Result:
    """Block-matrix parameters one GPU holds: its stage's share of the layers, split by tensor
    parallelism, with the K and V projections copied where KV heads are replicated."""
    count = count_parameters(model)
    block = count.block_matrices
    share = stage_layers(model, pipeline) / model.num_hidden_layers
    kv = model.num_key_value_heads
    if model.is_latent or tensor <= kv:
        value = block * share / tensor
        return Result(value, COUNT, formula="block matrices × stage share ÷ tp",
                      worked=f"{grouped(block)}{_stage(model, pipeline)} ÷ {tensor} = {grouped(value)}")
    projections = model.num_hidden_layers * 2 * model.hidden_size * kv * model.head_dim
    value = ((block - projections) / tensor + projections / kv) * share
    return Result(value, COUNT, formula="(block matrices but K and V ÷ tp + K and V ÷ kv_heads) × stage share",
                  worked=(f"({grouped(block - projections)} ÷ {tensor} + {grouped(projections)} ÷ {kv})"
                          f"{_stage(model, pipeline)} = {grouped(value)}"))


def tables_per_gpu(model: Model, tensor: int, pipeline: int) -> Result:
    """Embedding and LM head parameters one GPU holds: a vocabulary slice of each table on its stage."""
    padded = -(-model.vocab_size // VOCAB_PADDING) * VOCAB_PADDING
    rows = -(-padded // tensor)
    tables = 2 if pipeline == 1 and not model.tie_word_embeddings else 1
    value = tables * rows * model.hidden_size
    return Result(value, COUNT, formula="tables on the stage × ⌈padded vocabulary ÷ tp⌉ × hidden",
                  worked=f"{tables} × ⌈{grouped(padded)} ÷ {tensor}⌉ × {grouped(model.hidden_size)} = {grouped(value)}")


def norms_per_gpu(model: Model, pipeline: int) -> Result:
    count = count_parameters(model)
    layers = stage_layers(model, pipeline)
    value = layers * count.norms_per_layer + count.final_norm
    return Result(value, COUNT, formula="layers on the stage × norms per layer + final norm (replicated)",
                  worked=f"{layers} × {grouped(count.norms_per_layer)} + {grouped(count.final_norm)} = {grouped(value)}")


def weights_per_gpu(model: Model, precision: Precision, tensor: int, pipeline: int) -> Result:
    """Bytes of weights one GPU holds. Quantisation converts the block matrices only; tables and
    norms stay in bf16, as calc.specs.precision.weight_bytes counts them."""
    matrices = matrices_per_gpu(model, tensor, pipeline)
    tables, norms = tables_per_gpu(model, tensor, pipeline), norms_per_gpu(model, pipeline)
    width = precision.bytes if precision.quantised else BF16.bytes
    value = matrices.value * width + (tables.value + norms.value) * BF16.bytes
    return Result(value, GIB_HELD, formula="matrices × bytes per weight + (tables + norms) × 2 B",
                  worked=(f"{grouped(matrices.value)} × {plain(width)} B + ({grouped(tables.value)} + "
                          f"{grouped(norms.value)}) × 2 B = {grouped(value)} B = {GIB_HELD.show(value)}"))


def cache_per_token(model: Model, kv: Precision, tensor: int, pipeline: int) -> Result:
    """Cache bytes one GPU keeps for each token: its stage's layers, its share of the KV heads."""
    layers = stage_layers(model, pipeline)
    if model.is_latent:
        width = model.kv_lora_rank + model.qk_rope_head_dim
        value = layers * width * kv.bytes
        return Result(value, KIB_HELD, formula="stage layers × (kv_lora_rank + qk_rope_head_dim) × bytes, on every rank",
                      worked=(f"{layers} × ({grouped(model.kv_lora_rank)} + {model.qk_rope_head_dim}) × {plain(kv.bytes)} "
                              f"= {grouped(value)} B = {KIB_HELD.show(value)}"))
    heads = kv_heads_per_rank(model, tensor)
    value = 2 * layers * heads * model.head_dim * kv.bytes
    # On one GPU the terms are the config's own, and named as config.json names them.
    formula = ("2 × layers × kv_heads × head_dim × bytes_per_element" if tensor == pipeline == 1 else
               "2 × stage layers × KV heads per rank × head_dim × bytes")
    return Result(value, KIB_HELD, formula=formula,
                  worked=(f"2 × {layers} × {heads} × {model.head_dim} × {plain(kv.bytes)} = {grouped(value)} B = "
                          f"{KIB_HELD.show(value)}"))


def rotary_table(model: Model) -> Result:
    """The cos and sin of every position the model's rotary embedding reaches, which vLLM computes
    once at load and counts with the weights: max positions × head_dim × 2 B."""
    if model.is_latent:
        width = model.qk_rope_head_dim
    else:
        width = model.head_dim
    value = model.max_position_embeddings * width * BF16.bytes
    return Result(value, BYTES, formula="max_position_embeddings × rotary dimension × 2 B",
                  worked=f"{grouped(model.max_position_embeddings)} × {width} × 2 B = {grouped(value)} B")
