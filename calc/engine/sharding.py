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
from ..core.arith import ceil_div, field, made_of, term
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
    heads = field(model, "num_key_value_heads")
    if tensor < kv:
        return Result(1, COUNT, formula="1 while tp < kv_heads",
                      worked=f"{tensor} GPUs split {kv} KV heads: each head is held once", inputs=made_of(heads))
    copies = tensor // kv  # whole: tp is a multiple of kv_heads here (refusal), so ⌊⌋ is not written
    return Result(copies, COUNT, formula="tp ÷ kv_heads once tp ≥ kv_heads", worked=f"{tensor} ÷ {kv} = {copies}",
                  inputs=made_of(heads))


def _stage(model: Model, pipeline: int) -> str:
    """The pipeline factor in a worked line, or nothing at one stage."""
    return f" × {stage_layers(model, pipeline)} ÷ {model.num_hidden_layers}" if pipeline > 1 else ""


def matrices_per_gpu(model: Model, tensor: int, pipeline: int) -> Result:
    """Block-matrix parameters one GPU holds: its stage's share of the layers, split by tensor
    parallelism, with the K and V projections copied where KV heads are replicated."""
    count = count_parameters(model)
    block = count.block_matrices
    share = stage_layers(model, pipeline) / model.num_hidden_layers
    # the stage share as the worked line writes it, "× stage ÷ layers", but multiplied as one number
    staged = term(share, _stage(model, pipeline)[3:]) if pipeline > 1 else None
    kv = model.num_key_value_heads
    if model.is_latent or tensor <= kv:
        matrices = term(field(count, "block_matrices"), grouped(block))
        # at one stage the share is 1.0: block × 1.0 ÷ tp is block ÷ tp to the bit
        return ((matrices * staged if staged else matrices) / term(tensor)).result(
            COUNT, "block matrices × stage share ÷ tp")
    projections = model.num_hidden_layers * 2 * model.hidden_size * kv * model.head_dim
    split = term(block - projections) / term(tensor) + term(projections) / term(field(model, "num_key_value_heads"))
    # at one stage the share is 1.0, and × 1.0 changes no bit
    return (split * staged if staged else split).result(
        COUNT, "(block matrices but K and V ÷ tp + K and V ÷ kv_heads) × stage share")


def tables_per_gpu(model: Model, tensor: int, pipeline: int) -> Result:
    """Embedding and LM head parameters one GPU holds: a vocabulary slice of each table on its stage."""
    padded = -(-model.vocab_size // VOCAB_PADDING) * VOCAB_PADDING
    tables = 2 if pipeline == 1 and not model.tie_word_embeddings else 1
    return (term(tables) * ceil_div(padded, tensor) * term(field(model, "hidden_size"))).result(
        COUNT, "tables on the stage × ⌈padded vocabulary ÷ tp⌉ × hidden")


def norms_per_gpu(model: Model, pipeline: int) -> Result:
    count = count_parameters(model)
    layers = stage_layers(model, pipeline)
    return (term(layers) * term(field(count, "norms_per_layer")) + term(field(count, "final_norm"))).result(
        COUNT, "layers on the stage × norms per layer + final norm (replicated)")


def weights_per_gpu(model: Model, precision: Precision, tensor: int, pipeline: int) -> Result:
    """Bytes of weights one GPU holds. Quantisation converts the block matrices only; tables and
    norms stay in bf16, as calc.specs.precision.weight_bytes counts them."""
    matrices = matrices_per_gpu(model, tensor, pipeline)
    tables, norms = tables_per_gpu(model, tensor, pipeline), norms_per_gpu(model, pipeline)
    width = precision.bytes if precision.quantised else BF16.bytes
    held = (term(matrices, grouped(matrices.value)) * term(width, f"{plain(width)} B")
            + (term(tables, grouped(tables.value)) + term(norms, grouped(norms.value))) * term(BF16.bytes, "2 B"))
    return held.result(GIB_HELD, "matrices × bytes per weight + (tables + norms) × 2 B",
                       shown=f"{grouped(held.value)} B = {GIB_HELD.show(held.value)}")


def cache_per_token(model: Model, kv: Precision, tensor: int, pipeline: int) -> Result:
    """Cache bytes one GPU keeps for each token: its stage's layers, its share of the KV heads."""
    layers = stage_layers(model, pipeline)
    if model.is_latent:
        cached = (term(layers) * (term(field(model, "kv_lora_rank"), grouped(model.kv_lora_rank))
                                  + term(field(model, "qk_rope_head_dim"), str(model.qk_rope_head_dim)))
                  * term(kv.bytes, plain(kv.bytes)))
        return cached.result(KIB_HELD, "stage layers × (kv_lora_rank + qk_rope_head_dim) × bytes, on every rank",
                             shown=f"{grouped(cached.value)} B = {KIB_HELD.show(cached.value)}")
    heads = kv_heads_per_rank(model, tensor)
    # on one GPU the layers and heads are the config's own fields
    layers_t = term(field(model, "num_hidden_layers"), str(layers)) if pipeline == 1 else term(layers, str(layers))
    heads_t = (term(field(model, "num_key_value_heads"), str(heads)) if tensor == 1 and not model.is_latent
               else term(heads, str(heads)))
    cached = (term(2) * layers_t * heads_t * term(field(model, "head_dim"), str(model.head_dim))
              * term(kv.bytes, plain(kv.bytes)))
    # On one GPU the terms are the config's own, and named as config.json names them.
    formula = ("2 × layers × kv_heads × head_dim × bytes_per_element" if tensor == pipeline == 1 else
               "2 × stage layers × KV heads per rank × head_dim × bytes")
    return cached.result(KIB_HELD, formula, shown=f"{grouped(cached.value)} B = {KIB_HELD.show(cached.value)}")


def rotary_table(model: Model) -> Result:
    """The cos and sin of every position the model's rotary embedding reaches, which vLLM computes
    once at load and counts with the weights: max positions × head_dim × 2 B."""
    if model.is_latent:
        width = model.qk_rope_head_dim
    else:
        width = model.head_dim
    return (term(field(model, "max_position_embeddings")) * term(field(model, "qk_rope_head_dim" if model.is_latent
                                                                       else "head_dim"), str(width))
            * term(BF16.bytes, "2 B")).result(BYTES, "max_position_embeddings × rotary dimension × 2 B")
