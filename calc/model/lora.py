"""LoRA adapters: what one fine-tune adds to a base model, and what vLLM holds for them per GPU.

A LoRA adapter on a linear layer W (d_out × d_in) is two matrices, A (rank × d_in) and B (d_out ×
rank): rank × (d_in + d_out) parameters where W has d_in × d_out. vLLM allocates, at start-up,
`--max-loras` slots on every LoRA-capable linear layer, each sized for `--max-lora-rank`, in the
model's 16-bit dtype (vllm/lora/layers/base_linear.py, create_lora_weights: lora_a_stacked is
max_loras × 1 × rank × input_size, lora_b_stacked max_loras × 1 × output_size × rank, one per
slice of q/k/v and of gate/up). The memory profile runs with those buffers in place, so they come
out of the KV budget. Under tensor parallelism, a column-parallel layer (q, k, v, gate, up) keeps
A whole and splits B; a row-parallel one (o, down) splits A and keeps B whole (not fully sharded,
vLLM's default).

The model's embedding and LM head are LoRA-capable too (LlamaForCausalLM's embedding_modules), and
vLLM sizes slots for them unless --lora-target-modules narrows the list: the embedding holds A as
max_loras × vocab × rank and B as max_loras × 1 × hidden × rank (VocabParallelEmbeddingWithLoRA),
the LM head A as max_loras × 1 × rank × hidden and B as max_loras × 1 × vocab × rank
(LogitsProcessorWithLoRA), neither split under tensor parallelism.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..specs.models import Model
from ..specs.precision import BF16
from ..core.arith import Expr, field, term, total
from ..core.units import MIB_REPORTED, TOKENS, Result, Unit, grouped

USERS_FINE = Unit("users", 1, "users", 2)

LORA_SOURCE = ("Hu et al., LoRA: Low-Rank Adaptation of Large Language Models, 2021, "
               "https://arxiv.org/abs/2106.09685; vllm/lora/layers/base_linear.py, vocab_parallel_embedding.py and "
               "logits_processor.py, create_lora_weights (vllm-project/vllm, main)")
WORKED_RANK = 16
WORKED_SLOTS = 8  # an example: eight adapters resident at once


@dataclass(frozen=True)
class Projection:
    """One linear layer of a block: its shape, and whether tensor parallelism splits its output."""

    name: str
    d_in: int
    d_out: int
    column: bool
    d_in_field: str = ""  # the config field each side is, where it is one (a product of two is not)
    d_out_field: str = ""


def projections(model: Model, targets: str = "all") -> tuple[Projection, ...]:
    """The block's linear layers LoRA can adapt: all seven, or only q and v (the LoRA paper's choice)."""
    hidden, heads, kv = model.hidden_size, model.num_attention_heads * model.head_dim, \
        model.num_key_value_heads * model.head_dim
    hid, mlp = "hidden_size", "intermediate_size"
    every = (Projection("q_proj", hidden, heads, True, hid), Projection("k_proj", hidden, kv, True, hid),
             Projection("v_proj", hidden, kv, True, hid), Projection("o_proj", heads, hidden, False, "", hid),
             Projection("gate_proj", hidden, model.intermediate_size, True, hid, mlp),
             Projection("up_proj", hidden, model.intermediate_size, True, hid, mlp),
             Projection("down_proj", model.intermediate_size, hidden, False, mlp, hid))
    return every if targets == "all" else tuple(p for p in every if p.name in ("q_proj", "v_proj"))


def sides(model: Model, targets: str = "all") -> list[tuple[Expr, Expr]]:
    """Each target's d_in and d_out as operands: the config field read where the side is one (each
    field one result, however often it appears), the number itself where it is a product (heads × head_dim)."""
    fields = {name: field(model, name) for name in ("hidden_size", "intermediate_size")}
    return [tuple(term(fields[name]) if name else term(side)
                  for side, name in ((p.d_in, p.d_in_field), (p.d_out, p.d_out_field)))
            for p in projections(model, targets)]


def parameters_per_layer(model: Model, rank: int, targets: str = "all", tp: int = 1) -> int:
    """rank × (d_in + d_out) summed over the targets; per GPU, the split side divided by `tp`."""
    total = 0
    for p in projections(model, targets):
        a_in = p.d_in if p.column else p.d_in // tp
        b_out = p.d_out // tp if p.column else p.d_out
        total += rank * (a_in + b_out)
    return total


def adapter_bytes(model: Model, rank: int, targets: str = "all") -> Result:
    """One adapter: Σ over layers and targets of rank × (d_in + d_out) × 2 bytes."""
    shapes = total(_bracketed(a + b) for a, b in sides(model, targets))
    product = (term(field(model, "num_hidden_layers")) * term(rank) * shapes * term(BF16.bytes, f"{BF16.bytes:g} B"))
    return product.result(MIB_REPORTED, "layers × rank × Σ (d_in + d_out) × bytes per parameter",
                          shown=f"{grouped(int(product.value))} B = {MIB_REPORTED.show(product.value)}")


def _bracketed(expr: Expr) -> Expr:
    """A sum kept in brackets inside a longer sum, as the worked line groups each layer's two sides."""
    return Expr(expr.value, f"({expr.text})", expr.inputs)


def vocabulary_parameters(model: Model, rank: int) -> int:
    """One slot's buffers on the embedding and the LM head: rank × (vocab + hidden) each, whole on every GPU."""
    return 2 * rank * (model.vocab_size + model.hidden_size)


def slots_reserved(model: Model, rank: int, slots: int, tp: int = 1) -> Result:
    """What vLLM holds on each GPU for `slots` adapters at `rank`: the blocks' linear layers and the
    embedding and LM head; zero when LoRA is off."""
    if not slots:
        return Result(0, MIB_REPORTED, formula="no LoRA slots", worked="LoRA is off: 0 MiB")
    per_layer = parameters_per_layer(model, rank, "all", tp)
    vocab = term(field(model, "vocab_size")) + term(field(model, "hidden_size"))
    product = (term(slots) * (term(field(model, "num_hidden_layers")) * term(per_layer) + term(2) * term(rank) * vocab)
               * term(BF16.bytes, f"{BF16.bytes:g} B"))
    split = f"; the blocks' A and B as split on each of {tp} GPUs" if tp > 1 else ""
    return product.result(MIB_REPORTED,
                          "slots × (layers × rank-sized A and B per layer + embedding and LM head) × bytes",
                          shown=f"{grouped(int(product.value))} B = {MIB_REPORTED.show(product.value)}{split}")


def tokens_displaced(reserved: Result, per_token: Result) -> Result:
    """The cache tokens the same bytes would hold."""
    return (term(reserved, f"{grouped(int(reserved.value))} B") / term(per_token, f"{grouped(per_token.value)} B")).result(
        TOKENS, "LoRA bytes ÷ cache bytes per token")
