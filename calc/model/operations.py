"""Arithmetic a forward pass performs, counted from the config.

Two terms. The matrix multiplies cost 2 operations (a multiply and an add) per parameter the
token multiplies by: every block matrix it passes through (for a mixture of experts, only the
experts it is routed to), and the LM head for each position whose next token is sampled; the
embedding is a lookup, not a multiply. In prefill only the prompt's last position is sampled:
engines compute logits for the positions they sample and no others (vLLM gathers those hidden
states before the LM head), so a prompt pays for the head once, not once per token. Attention
costs 4 × layers × (query heads × head_dim) per earlier position the token attends to: 2 for the
scores (q·k) and 2 for the weighted sum of values. Causal attention lets token t attend to t
positions (itself and those before), so a prompt of N tokens pays the causal half,
N(N + 1) ÷ 2 positions in all, never N². A sliding window caps each token's positions at the window.
"""
from __future__ import annotations

from functools import lru_cache

from .anatomy import count_parameters
from ..core.arith import config_term, term
from ..specs.models import Model
from ..core.units import COUNT, GFLOP, TFLOP, TOKENS, Result, grouped


PREFILL_FORMULA = ("operations = 2 × block parameters × N + 2 × head parameters "
                   "+ 4 × layers × query heads × head_dim × N(N + 1) ÷ 2")


@lru_cache(maxsize=512)
def block_parameters(model: Model) -> int:
    """Block-matrix parameters one token multiplies by: for a mixture of experts, only the experts
    it is routed to."""
    count = count_parameters(model)
    experts_skipped = model.num_local_experts - model.num_experts_per_tok
    one_expert = count.expert or ((count.feed_forward_per_layer - model.hidden_size * model.num_local_experts
                                   ) // model.num_local_experts if model.is_mixture_of_experts else 0)
    return count.block_matrices - (model.num_hidden_layers - count.dense_layers) * experts_skipped * one_expert


def head_parameters(model: Model) -> int:
    return model.vocab_size * model.hidden_size


def head_ops(model: Model) -> Result:
    """The LM head for one sampled position: 2 × vocabulary × hidden."""
    return (term(2) * config_term(model, "vocab_size") * config_term(model, "hidden_size")).result(
        GFLOP, "2 × vocabulary × hidden")


def _head_count(model: Model) -> Result:
    """The LM head's parameters, vocabulary × hidden, as a result that links the two config fields."""
    return (config_term(model, "vocab_size") * config_term(model, "hidden_size")).result(COUNT, "vocabulary × hidden")


@lru_cache(maxsize=512)
def multiplied_parameters(model: Model) -> Result:
    """Parameters a sampled token multiplies by: the active block matrices and the LM head."""
    active_blocks = block_parameters(model)
    head = _head_count(model)
    routed = (f"; the blocks count only the {model.num_experts_per_tok} of {model.num_local_experts} experts "
              f"each token is routed to" if model.is_mixture_of_experts else "")
    expr = term(active_blocks, f"{grouped(active_blocks)} in the blocks") + term(head, f"{grouped(head.value)} LM head")
    return expr.result(COUNT, "active block matrices + LM head", shown=f"{grouped(expr.value)}{routed}")


def attention_width(model: Model) -> int:
    """Query heads × head_dim: the width every score and weighted sum runs over, per layer. Latent
    attention (in the multi-head form prefill uses) scores over qk_nope + qk_rope and sums values of
    v_head_dim: the mean of the two widths keeps 4 × layers × width exact."""
    if model.is_latent:
        return model.num_attention_heads * (model.head_dim + model.v_head_dim) // 2
    return model.num_attention_heads * model.head_dim


@lru_cache(maxsize=512)
def linear_ops_per_token(model: Model) -> Result:
    params = multiplied_parameters(model)
    return (term(2) * term(params, grouped(params.value))).result(GFLOP, "2 × parameters multiplied")


@lru_cache(maxsize=512)
def attention_ops_per_position(model: Model) -> Result:
    """Operations for one token to attend to one position, across every layer."""
    expr = term(4) * config_term(model, "num_hidden_layers") * term(attention_width(model))
    return expr.result(COUNT, "4 × layers × query heads × head_dim", shown=grouped(expr.value))


def causal_positions(model: Model, prompt: int) -> int:
    """Positions attended to by all N tokens of a prompt: Σ min(t, window) for t = 1 … N."""
    window = model.sliding_window or prompt
    if prompt <= window:
        return prompt * (prompt + 1) // 2
    return window * (window + 1) // 2 + (prompt - window) * window


@lru_cache(maxsize=512)
def prefill_ops(model: Model, prompt: int) -> Result:
    """One prompt of `prompt` tokens through the whole model: every position through the blocks,
    the LM head for the last position only, and causal attention."""
    blocks, head = block_parameters(model), _head_count(model)
    linear = term(2) * term(blocks) * term(prompt) + term(2) * term(head, grouped(head.value))
    positions = causal_positions(model, prompt)
    per_position = attention_ops_per_position(model)
    attention = term(per_position, grouped(per_position.value)) * term(positions)
    expr = linear + attention
    return expr.result(TFLOP, "2 × block parameters × N + 2 × head + attention per position × causal positions",
                       shown=f"{TFLOP.show(linear.value)} + {TFLOP.show(attention.value)} = {TFLOP.show(expr.value)}")


def decode_ops(model: Model, batch: int, tokens: int) -> Result:
    """One decode step: each of `batch` sequences multiplies one new token through the model and
    attends to the `tokens` it holds (a window caps them)."""
    held = model.tokens_cached(tokens)
    params, per_position = multiplied_parameters(model), attention_ops_per_position(model)
    per_sequence = term(2) * term(params, grouped(params.value)) + term(per_position, grouped(per_position.value)) * term(held)
    return (term(batch) * per_sequence).result(GFLOP, "batch × (2 × parameters + attention per position × tokens held)")


def attention_crossover(model: Model) -> Result:
    """The prompt length at which causal attention's operations equal the blocks' matrix work:
    per_position × N(N + 1) ÷ 2 = 2 × blocks × N, so N = 4 × blocks ÷ per_position − 1 (no window)."""
    per_position = attention_ops_per_position(model)
    return (term(4) * term(block_parameters(model)) / term(per_position, grouped(per_position.value)) - term(1)).result(
        TOKENS, "4 × block parameters ÷ attention per position − 1")
