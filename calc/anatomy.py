"""Where a model's parameters live, counted from its config rather than read off a model card."""
from __future__ import annotations

from functools import lru_cache

from dataclasses import dataclass

from .models import Model
from .units import COUNT, PERCENT, Result, grouped


@dataclass(frozen=True)
class ParameterCount:
    """Every weight of a Llama-style decoder, grouped the way the forward pass uses them."""

    model: Model
    attention_per_layer: int
    feed_forward_per_layer: int
    norms_per_layer: int
    embedding: int
    unembedding: int
    final_norm: int
    # DeepSeek: the first `dense_layers` layers keep a dense feed-forward block of this size, and
    # one routed expert (which the per-layer count cannot reveal beside shared experts) has `expert`.
    dense_layers: int = 0
    dense_feed_forward: int = 0
    expert: int = 0

    @property
    def per_layer(self) -> int:
        return self.attention_per_layer + self.feed_forward_per_layer + self.norms_per_layer

    @property
    def per_dense_layer(self) -> int:
        return self.attention_per_layer + self.dense_feed_forward + self.norms_per_layer

    @property
    def total(self) -> Result:
        layers = self.model.num_hidden_layers
        sparse = layers - self.dense_layers
        value = (sparse * self.per_layer + self.dense_layers * self.per_dense_layer + self.embedding
                 + self.unembedding + self.final_norm)
        ends = (f"{grouped(self.embedding)} embedding + {grouped(self.unembedding)} output head"
                if self.unembedding else f"{grouped(self.embedding)} embedding tied to the output head")
        if self.dense_layers:
            return Result(
                value, COUNT, formula="dense layers × per dense layer + expert layers × per-layer + embedding + output head + final norm",
                worked=(f"{self.dense_layers} × {grouped(self.per_dense_layer)} + {sparse} × {grouped(self.per_layer)} + "
                        f"{ends} + {grouped(self.final_norm)} = {grouped(value)}"))
        return Result(
            value,
            COUNT,
            formula="layers × per-layer + embedding + output head + final norm",
            worked=f"{layers} × {grouped(self.per_layer)} + {ends} + {grouped(self.final_norm)} = {grouped(value)}",
        )

    @property
    def block_matrices(self) -> int:
        """The weights of every layer's attention and feed-forward matrices (with their few biases):
        what weight quantisation converts. Embedding, output head and norms are the rest."""
        return (self.model.num_hidden_layers * (self.attention_per_layer + self.feed_forward_per_layer)
                + self.dense_layers * (self.dense_feed_forward - self.feed_forward_per_layer))

    @property
    def feed_forward_share(self) -> Result:
        value = self.model.num_hidden_layers * self.feed_forward_per_layer / self.total.value
        return Result(value, PERCENT, formula="layers × feed-forward ÷ total",
                      worked=(f"{self.model.num_hidden_layers} × {grouped(self.feed_forward_per_layer)} ÷ "
                              f"{grouped(self.total.value)} = {PERCENT.show(value)}"))


def latent_attention_parameters(model: Model) -> int:
    """One layer of multi-head latent attention (DeepSeek-V2/V3): queries through a low-rank
    bottleneck when q_lora_rank is set, keys and values from one latent plus a shared RoPE key,
    the output projection; the two bottleneck norms included."""
    hidden, heads = model.hidden_size, model.num_attention_heads
    q_width = heads * (model.qk_nope_head_dim + model.qk_rope_head_dim)
    queries = (hidden * model.q_lora_rank + model.q_lora_rank + model.q_lora_rank * q_width
               if model.q_lora_rank else hidden * q_width)
    latent = hidden * (model.kv_lora_rank + model.qk_rope_head_dim) + model.kv_lora_rank
    rebuilt = model.kv_lora_rank * heads * (model.qk_nope_head_dim + model.v_head_dim)
    output = heads * model.v_head_dim * hidden
    return queries + latent + rebuilt + output


def _count_latent(model: Model) -> ParameterCount:
    """DeepSeek-V2/V3: latent attention in every layer; a dense feed-forward in the first
    first_k_dense_replace layers and DeepSeekMoE (routed and shared experts, a router) after them."""
    hidden = model.hidden_size
    expert = 3 * hidden * model.moe_intermediate_size
    routed = model.num_local_experts if model.is_mixture_of_experts else 0
    moe = (routed + model.n_shared_experts) * expert
    if routed:
        moe += hidden * routed + (routed if model.router_bias else 0)
    embedding = model.vocab_size * hidden
    return ParameterCount(
        model=model,
        attention_per_layer=latent_attention_parameters(model),
        feed_forward_per_layer=moe if routed else 3 * hidden * model.intermediate_size,
        norms_per_layer=2 * hidden,
        embedding=embedding,
        unembedding=0 if model.tie_word_embeddings else embedding,
        final_norm=hidden,
        dense_layers=model.first_k_dense_replace if routed else 0,
        dense_feed_forward=3 * hidden * model.intermediate_size,
        expert=expert,
    )


@lru_cache(maxsize=512)
def count_parameters(model: Model) -> ParameterCount:
    """The exact parameter count of a Llama-style decoder (RMSNorm, SwiGLU, optional MoE)."""
    if model.is_latent:
        return _count_latent(model)
    hidden, head_dim = model.hidden_size, model.head_dim
    q_width = model.num_attention_heads * head_dim
    kv_width = model.num_key_value_heads * head_dim
    attention = hidden * q_width + 2 * hidden * kv_width + q_width * hidden
    if model.qkv_bias:
        attention += q_width + 2 * kv_width
    if model.output_bias:
        attention += hidden
    one_expert = 3 * hidden * model.intermediate_size
    if model.mlp_bias:
        one_expert += 2 * model.intermediate_size + hidden
    feed_forward = model.num_local_experts * one_expert
    if model.is_mixture_of_experts:
        feed_forward += hidden * model.num_local_experts
    embedding = model.vocab_size * hidden
    return ParameterCount(
        model=model,
        attention_per_layer=attention,
        feed_forward_per_layer=feed_forward,
        norms_per_layer=(4 if model.sandwich_norms else 2) * hidden + (2 * head_dim if model.qk_norm else 0),
        embedding=embedding,
        unembedding=0 if model.tie_word_embeddings else embedding,
        final_norm=hidden,
    )
