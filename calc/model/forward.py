"""One token's forward pass, read off the config: the shape of every matrix it meets, the share of
the parameters each part holds and each part multiplies, and the operations the token costs.

Document 02's section. The counting lives in `anatomy`, the operations in `operations`; this
module puts them side by side for one model, at the length the stack's sequences hold.
"""
from __future__ import annotations

from . import operations
from .anatomy import GROUPS, breakdown, count_parameters, mixture, rule_of_thumb, tying
from ..specs.models import Model
from ..specs.precision import BF16, FP8, INT4
from .weights import weight_bytes
from .roofline import weights_read
from ..specs.stack import Stack
from ..core.arith import config_term, term
from ..core.units import COUNT, GFLOP, RATIO, RATIO_FINE, SHARE, Result, grouped


def widths(model: Model) -> dict[str, Result]:
    """The widths a token's vectors take inside one layer."""
    head_dim = config_term(model, "head_dim")
    return {
        "q": (config_term(model, "num_attention_heads") * head_dim).result(COUNT, "query heads × head_dim"),
        "kv": (config_term(model, "num_key_value_heads") * head_dim).result(COUNT, "KV heads × head_dim"),
    }


def multiplied_by_group(model: Model) -> dict[str, int]:
    """Parameters one sampled token multiplies by, group by group: the embedding is gathered and the
    norms scale element by element, so neither multiplies; a mixture uses only its chosen experts;
    the LM head multiplies its whole table, tied or not."""
    parts = breakdown(model)
    feed_forward = parts.group("feed-forward") // model.num_local_experts * model.num_experts_per_tok
    return {"embedding": 0, "attention": parts.group("attention"), "feed-forward": feed_forward,
            "router": parts.group("router"), "norms": 0, "LM head": operations.head_parameters(model)}


def share_curves(model: Model) -> dict:
    """Each group's share of the parameters held and of the parameters a token multiplies, in
    percent: the anatomy chart's two sets of bars and the rows of its data table."""
    parts = breakdown(model)
    held = {name: parts.group(name) for name in GROUPS}
    used = multiplied_by_group(model)
    names = [name for name in GROUPS if held[name] or used[name]]
    total, multiplied = parts.total.value, sum(used.values())
    curves = [
        {"name": "share of the parameters held", "x": names, "y": [100 * held[n] / total for n in names]},
        {"name": "share of the parameters one token multiplies", "x": names,
         "y": [100 * used[n] / multiplied for n in names]},
    ]
    rows = [[name] + [f"{curve['y'][i]:.1f}%" for curve in curves] for i, name in enumerate(names)]
    return {"curves": curves, "rows": rows}


def flops(model: Model, held: int) -> dict[str, Result]:
    """Operations for one token: two per parameter it multiplies, and attention over what it holds."""
    params = breakdown(model).total
    linear = operations.linear_ops_per_token(model)
    multiplied = operations.multiplied_parameters(model)
    at_held = operations.decode_ops(model, 1, held)
    attention = (term(at_held) - term(linear)).result(GFLOP, "the token's operations − its matrix operations")
    all_params, multiplied_params = term(params, grouped(params.value)), term(multiplied, grouped(multiplied.value))
    longest = max(model.max_position_embeddings, 1)
    return {
        "linear": linear,
        "naive": (term(2) * all_params).result(GFLOP, "2 × all parameters"),
        "unmultiplied": (term(2) * (all_params - multiplied_params)).result(
            GFLOP, "2 × (all parameters − parameters multiplied)"),
        "per_position": operations.attention_ops_per_position(model),
        "tokens": Result(model.tokens_cached(held), COUNT, formula="tokens the sequence holds",
                         worked=grouped(model.tokens_cached(held))),
        "at_held": at_held,
        "attention_share": (term(attention) / term(at_held)).result(SHARE, "attention ÷ the token's operations"),
        "at_max": operations.decode_ops(model, 1, longest),
    }


def against(model: Model, other: Model) -> dict[str, Result]:
    """One model's cost per token and weights held, as multiples of another's."""
    ops, other_ops = operations.linear_ops_per_token(model), operations.linear_ops_per_token(other)
    held, other_held = weight_bytes(model, BF16), weight_bytes(other, BF16)
    return {
        "ops": (term(ops) / term(other_ops)).result(RATIO, "this model's operations per token ÷ the other's"),
        "weights": (term(held) / term(other_held)).result(RATIO, "this model's bf16 weights ÷ the other's"),
    }


def squares(model: Model) -> dict[str, Result]:
    """One layer's blocks in units of hidden²: how wide the feed-forward block is against attention,
    and what a plain four-times-wide block of two matrices would hold."""
    count, hidden = count_parameters(model), config_term(model, "hidden_size")
    return {
        "feed_forward": (term(count.feed_forward_per_layer) / (hidden * hidden)).result(
            RATIO_FINE, "feed-forward parameters per layer ÷ hidden²"),
        "attention": (term(count.attention_per_layer) / (hidden * hidden)).result(
            RATIO_FINE, "attention parameters per layer ÷ hidden²"),
        "plain": (term(2) * term(4)).result(RATIO_FINE, "two matrices of hidden × 4·hidden, in hidden²"),
        "swiglu_plain": (term(3) * term(4)).result(RATIO_FINE, "three matrices of hidden × 4·hidden, in hidden²"),
    }


def section(stack: Stack) -> dict[str, object]:
    """Everything document 02 shows about the stack's model."""
    model = stack.model
    parts = breakdown(model)
    return {
        "model": model,
        **{c.key: c for c in parts.components},
        "total": parts.total,
        "layers": parts.layers,
        "attention": parts.summed("attention", "attention", ("q", "k", "v", "o")),
        "feed_forward": parts.summed("feed_forward", "feed-forward", ("gate", "up", "down")),
        "vocabulary": parts.summed("vocabulary", "vocabulary tables", ("embedding", "head")),
        "width": widths(model),
        "mixture": mixture(model),
        "tying": tying(model),
        "rule": rule_of_thumb(model),
        "squares": squares(model),
        "flops": flops(model, stack.workload.tokens_held),
        "read": weights_read(model, BF16),
        "weights": {"bf16": weight_bytes(model, BF16), "fp8": weight_bytes(model, FP8), "int4": weight_bytes(model, INT4)},
    }
