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

    @property
    def per_layer(self) -> int:
        return self.attention_per_layer + self.feed_forward_per_layer + self.norms_per_layer

    @property
    def total(self) -> Result:
        layers = self.model.num_hidden_layers
        value = layers * self.per_layer + self.embedding + self.unembedding + self.final_norm
        ends = (f"{grouped(self.embedding)} embedding + {grouped(self.unembedding)} output head"
                if self.unembedding else f"{grouped(self.embedding)} embedding tied to the output head")
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
        return self.model.num_hidden_layers * (self.attention_per_layer + self.feed_forward_per_layer)

    @property
    def feed_forward_share(self) -> Result:
        value = self.model.num_hidden_layers * self.feed_forward_per_layer / self.total.value
        return Result(value, PERCENT, formula="layers × feed-forward ÷ total",
                      worked=(f"{self.model.num_hidden_layers} × {grouped(self.feed_forward_per_layer)} ÷ "
                              f"{grouped(self.total.value)} = {PERCENT.show(value)}"))


@lru_cache(maxsize=512)
def count_parameters(model: Model) -> ParameterCount:
    """The exact parameter count of a Llama-style decoder (RMSNorm, SwiGLU, optional MoE)."""
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
        norms_per_layer=2 * hidden + (2 * head_dim if model.qk_norm else 0),
        embedding=embedding,
        unembedding=0 if model.tie_word_embeddings else embedding,
        final_norm=hidden,
    )
