"""The attention dial: how many keys and values each token leaves behind, setting by setting.

Multi-head, grouped-query and multi-query attention differ only in how many key/value heads the
query heads share; latent attention (DeepSeek-V2/V3) caches one compressed latent and one shared
RoPE key per layer instead; a sliding window bounds how many tokens a layer keeps, and a hybrid
model windows some layers and not the others. Every figure here is a function of the config.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine import kvcache
from ..specs.models import DEEPSEEK_V2, DEEPSEEK_V3, GEMMA_2_9B, LLAMA_3_1_8B, MISTRAL_7B, Model
from ..specs.precision import Precision
from ..specs.stack import Stack
from ..core.arith import config_term, field, made_of, term
from ..core.units import (BYTES, COUNT, FLOP_PER_BYTE, GIB_HELD, KIB_HELD, PERCENT, RATIO, TIMES, TOKENS, Result, Unit,
    floor_count, given, grouped, plain)

KV_HEADS = Unit("KV heads", 1, "KV heads", 2)

GQA_UPTRAINING = 0.05
GQA_SOURCE = ("Ainslie et al. 2023, GQA: Training Generalized Multi-Query Transformer Models from Multi-Head "
              "Checkpoints: key and value heads of each group mean-pooled, then uptrained with 5% of the "
              "original pre-training compute")
MQA_SOURCE = "Shazeer 2019, Fast Transformer Decoding: One Write-Head is All You Need"
MLA_SOURCE = ("DeepSeek-AI 2024, DeepSeek-V2 (arXiv 2405.04434): kv_lora_rank = 4 × head width, "
              "decoupled RoPE key = half a head width")
WINDOW_SOURCE = "Beltagy et al. 2020 (Longformer); Jiang et al. 2023 (Mistral 7B): sliding_window 4096"
HYBRID_SOURCE = "Gemma Team 2024, Gemma 2: local (4,096-token window) and global attention in alternate layers"



def elements_per_layer(model: Model) -> Result:
    """Numbers one token leaves in one layer's cache."""
    if model.is_latent:
        return (config_term(model, "kv_lora_rank") + config_term(model, "qk_rope_head_dim")).result(
            COUNT, "kv_lora_rank + qk_rope_head_dim")
    return (term(2) * config_term(model, "num_key_value_heads") * config_term(model, "head_dim")).result(
        COUNT, "2 × kv_heads × head_dim")


def multi_head_per_token(model: Model, kv: Precision) -> Result:
    """The cache per token had every query head kept its own key and value: for latent attention,
    keys of qk_nope + qk_rope and values of v_head_dim for every head, in every layer."""
    layers, heads = model.num_hidden_layers, model.num_attention_heads
    if model.is_latent:
        value = layers * heads * (model.head_dim + model.v_head_dim) * kv.bytes
        expr = (config_term(model, "num_hidden_layers") * config_term(model, "num_attention_heads")
                * (config_term(model, "qk_nope_head_dim") + config_term(model, "qk_rope_head_dim") + config_term(model, "v_head_dim"))
                * term(kv.bytes, plain(kv.bytes)))
        if expr.value != value:  # head_dim is not qk_nope + qk_rope: the line as it was, resting on the same fields
            return Result(value, KIB_HELD, formula="layers × heads × (qk_nope + qk_rope + v_head_dim) × bytes",
                          worked=(f"{layers} × {heads} × ({model.qk_nope_head_dim} + {model.qk_rope_head_dim} + "
                                  f"{model.v_head_dim}) × {plain(kv.bytes)} = {grouped(value)} B = {KIB_HELD.show(value)}"),
                          inputs=expr.inputs)
        return expr.result(KIB_HELD, "layers × heads × (qk_nope + qk_rope + v_head_dim) × bytes",
                           shown=f"{grouped(value)} B = {KIB_HELD.show(value)}")
    return kvcache.bytes_per_token(replace(model, num_key_value_heads=heads), kv)


def held(model: Model, kv: Precision, tokens: int, block: int) -> Result:
    """The cache one sequence of `tokens` holds, in whole blocks: windowed layers keep at most the
    window, full-attention layers keep every token."""
    per_token = kvcache.bytes_per_token(model, kv)
    if not model.is_hybrid:
        kept = kvcache.tokens_in_blocks(min(tokens, model.sliding_window or tokens), block)
        return (term(per_token) * term(kept, grouped(kept.value))).result(
            GIB_HELD, "per token × tokens kept, in whole blocks")
    local = model.window_layers
    full = model.num_hidden_layers - local
    all_tokens = kvcache.tokens_in_blocks(tokens, block)
    window = kvcache.tokens_in_blocks(min(tokens, model.sliding_window), block)
    per_layer = (term(elements_per_layer(model)) * term(kv.bytes, plain(kv.bytes))).result(
        BYTES, "elements per layer × bytes per element")
    expr = term(per_layer, f"{grouped(per_layer.value)} B") * (
        term(full) * term(all_tokens, grouped(all_tokens.value))
        + term(field(model, "window_layers"), str(local)) * term(window, grouped(window.value)))
    return expr.result(
        GIB_HELD, "bytes per token per layer × (full layers × tokens + windowed layers × window), in whole blocks")


def users(budget: Result, per_user: Result) -> Result:
    """Whole users: the floor of the KV budget over one user's cache (the ladder's count, since
    both are whole blocks)."""
    if budget.value <= 0:
        return Result(0, COUNT, formula="⌊KV budget ÷ per user⌋",
                      worked="no KV budget is left: the weights and what the engine's profile holds back fill the pool",
                      inputs=made_of(budget))
    count = floor_count(budget.value, per_user.value)
    # a pasted config can make one user's cache a few hundred bytes, too small for GiB to show exactly
    shown = (f"{budget.operand} ÷ {per_user.operand}" if per_user.value >= 2 ** 20 else
             f"{grouped(round(budget.value))} B ÷ {grouped(round(per_user.value))} B")
    return Result(count, COUNT, formula="⌊KV budget ÷ per user⌋",
                  worked=f"{shown} = {grouped(budget.value / per_user.value, 2)} → {grouped(count)} users",
                  inputs=made_of(budget, per_user))


def ratio(larger: Result, smaller: Result, what: str) -> Result:
    return (term(larger, f"{grouped(larger.value)} B") / term(smaller, f"{grouped(smaller.value)} B")).result(RATIO, what)


@dataclass(frozen=True)
class Setting:
    """One position of the dial on one model: what a token costs, what a user costs, who fits."""

    key: str
    name: str
    model: Model
    elements: Result
    per_token: Result
    multi_head: Result
    versus_multi_head: Result
    per_user: Result
    per_user_long: Result
    users: Result
    binds: str


def setting(key: str, name: str, model: Model, stack: Stack, budget: Result, long: int) -> Setting:
    per_token = kvcache.bytes_per_token(model, stack.kv_precision)
    multi_head = multi_head_per_token(model, stack.kv_precision)
    at_limit = held(model, stack.kv_precision, stack.context_limit, stack.block_size)
    at_long = held(model, stack.kv_precision, long, stack.block_size)
    charged = int(kvcache.tokens_in_blocks(stack.context_limit, stack.block_size).value)
    if budget.value <= 0:
        binds = "the weights and what the engine's profile holds back, which alone overflow the pool"
    elif budget.value < at_limit.value:
        binds = "the KV budget is smaller than one user's worst-case cache"
    else:
        binds = "the KV budget: cache memory, not compute"
    return Setting(
        key=key, name=name, model=model,
        elements=elements_per_layer(model),
        per_token=per_token,
        multi_head=multi_head,
        versus_multi_head=(term(multi_head, f"{grouped(multi_head.value)} B") * term(charged)
                           / term(at_limit, f"{grouped(at_limit.value)} B")).result(
            RATIO, "multi-head cache per user ÷ this setting's, at the context limit in whole blocks"),
        per_user=at_limit,
        per_user_long=at_long,
        users=users(budget, at_limit),
        binds=binds,
    )


def dial(base: Model) -> dict[str, tuple[str, Model]]:
    """The six settings on one model's shape: its query heads, layers and head width kept, the
    attention changed. MLA takes DeepSeek-V2's proportions (a latent four heads wide, a RoPE key half
    a head wide, carved out of each head's width so its multi-head form is the model's own); the
    windows are Mistral's and Gemma 2's."""
    heads, width = base.num_attention_heads, base.head_dim
    plain_base = replace(base, sliding_window=None, window_layers=None)
    return {
        "mha": ("Multi-head (MHA)", replace(plain_base, num_key_value_heads=heads)),
        "gqa": (f"Grouped-query (GQA, {base.num_key_value_heads} KV heads)", plain_base),
        "mqa": ("Multi-query (MQA)", replace(plain_base, num_key_value_heads=1)),
        "mla": ("Latent (MLA)", replace(plain_base, num_key_value_heads=heads, kv_lora_rank=4 * width,
                                        qk_rope_head_dim=width // 2, qk_nope_head_dim=width - width // 2,
                                        v_head_dim=width, head_dim_given=width)),
        "window": ("Sliding window", replace(plain_base, sliding_window=MISTRAL_7B.sliding_window)),
        "hybrid": ("Local/global hybrid", replace(plain_base, sliding_window=GEMMA_2_9B.sliding_window,
                                                  window_layers=(base.num_hidden_layers + 1) // 2)),
    }


def _base(model: Model) -> Model:
    """The model whose shape the dial turns: the stack's own if its attention is plain, else the
    reference 8B (a latent or windowed model has no plain setting to start from)."""
    return model if not (model.is_latent or model.sliding_window) else LLAMA_3_1_8B


def latent_ops_per_position(model: Model) -> Result:
    """Decode attention over the latent itself (the up-projections absorbed into the query and the
    output): per cached position and layer, 2 × heads × (latent + RoPE key) for the scores and
    2 × heads × latent for the weighted sum."""
    heads, latent = config_term(model, "num_attention_heads"), term(field(model, "kv_lora_rank"), str(model.kv_lora_rank))
    rope = term(field(model, "qk_rope_head_dim"), str(model.qk_rope_head_dim))
    return (term(2) * heads * (latent + rope) + term(2) * heads * latent).result(
        COUNT, "2 × heads × (kv_lora_rank + qk_rope) + 2 × heads × kv_lora_rank")


def multi_head_ops_per_position(model: Model) -> Result:
    """The same in multi-head form: scores over qk_nope + qk_rope, values of v_head_dim, per head."""
    heads = config_term(model, "num_attention_heads")
    return (term(2) * heads * config_term(model, "head_dim") + term(2) * heads * config_term(model, "v_head_dim")).result(
        COUNT, "2 × heads × (qk_nope + qk_rope) + 2 × heads × v_head_dim")


def intensity(ops: Result, elements: int, kv: Precision) -> Result:
    """Operations per byte of cache read, per position and layer."""
    return (term(ops, grouped(ops.value)) / (term(elements) * term(kv.bytes, f"{plain(kv.bytes)} B"))).result(
        FLOP_PER_BYTE, "operations per position ÷ bytes read per position")


def gqa_ops_per_position(model: Model) -> Result:
    """Attention's operations per cached position and layer under MHA, GQA or MQA alike: every
    query head still scores every key and sums every value, so the KV head count never enters."""
    return (term(4) * config_term(model, "num_attention_heads") * config_term(model, "head_dim")).result(
        COUNT, "4 × query heads × head_dim")


def key_projection(model: Model, kv_heads: int) -> Result:
    """One layer's W_K: hidden × (KV heads × head_dim) parameters, fixed when the model is trained."""
    return (config_term(model, "hidden_size") * term(kv_heads) * config_term(model, "head_dim")).result(
        COUNT, "hidden × kv_heads × head_dim")


def real(model: Model, stack: Stack, long: int) -> dict[str, Result]:
    """A published model's cache: per token, its multi-head equivalent, and what a user holds."""
    kv = stack.kv_precision
    per_token = kvcache.bytes_per_token(model, kv)
    multi = multi_head_per_token(model, kv)
    limit = min(long, model.max_position_embeddings or long)
    at_long = held(model, kv, limit, stack.block_size)
    charged = int(kvcache.tokens_in_blocks(limit, stack.block_size).value)
    unbounded = (term(per_token) * term(charged)).result(GIB_HELD, "per token × every token, as if no layer were windowed")
    from ..model.anatomy import count_parameters
    return {
        "params": count_parameters(model).total,
        "elements": elements_per_layer(model),
        "per_token": per_token,
        "multi_head": multi,
        "versus_multi_head": ratio(multi, per_token, "multi-head equivalent ÷ cache per token"),
        "length": given(limit, TOKENS, "the length compared"),
        "per_user_long": at_long,
        "unbounded": unbounded,
        "window_saving": (term(unbounded) / term(at_long)).result(RATIO, "without a window ÷ with it"),
    }


def naive_window_everywhere(model: Model, kv: Precision, tokens: int) -> Result:
    """The claim that a window caps every layer: per token × the window, for a hybrid model."""
    per_token = kvcache.bytes_per_token(model, kv)
    kept = min(tokens, model.sliding_window)
    return (term(per_token) * term(kept)).result(GIB_HELD, "per token × window, as if every layer were windowed")


def naive_latent(model: Model, kv: Precision) -> Result:
    """The claim that MLA caches kv_lora_rank numbers per token, once."""
    value = model.kv_lora_rank * kv.bytes
    return (config_term(model, "kv_lora_rank") * term(kv.bytes, plain(kv.bytes))).result(
        KIB_HELD, "kv_lora_rank × bytes, once per token", shown=f"{grouped(value)} B = {KIB_HELD.show(value)}")


def multi_head_twin(base: Model, budget: Result, per_user: Result) -> dict[str, Result]:
    """A multi-head twin of the base model carries wider key and value projections: what those extra
    weights take from the budget, in bf16, and the users left."""
    expr = (config_term(base, "num_hidden_layers") * term(2) * config_term(base, "hidden_size")
            * (config_term(base, "num_attention_heads") - config_term(base, "num_key_value_heads")) * config_term(base, "head_dim")
            * term(2, "2 B"))
    extra = expr.value
    weights = expr.result(GIB_HELD, "layers × 2 × hidden × (query heads − KV heads) × head_dim × 2 B",
                          shown=f"{grouped(extra)} B = {GIB_HELD.show(extra)}")
    left = budget.value - extra
    users = floor_count(left, per_user.value)
    return {
        "extra_weights": weights,
        "users": Result(users, COUNT, formula="⌊(budget − extra weights) ÷ per-user cache⌋",
                        worked=(f"({GIB_HELD.precise(budget.value)} − {GIB_HELD.precise(extra)}) ÷ "
                                f"{GIB_HELD.precise(per_user.value)} = {grouped(left / per_user.value, 2)} → {users}"
                                if left > 0 else "the extra weights leave no KV budget at all"),
                        inputs=made_of(budget, weights, per_user) if left > 0 else made_of(budget, weights)),
    }


def _mla_as_gqa(model: Model) -> Result:
    """The KV heads grouped-query attention would need for a latent model's cache."""
    fields = [term(field(model, name), str(getattr(model, name))) for name in ("kv_lora_rank", "qk_rope_head_dim")]
    expr = (fields[0] + fields[1]) / (term(2) * term(field(model, "qk_nope_head_dim"), str(model.qk_nope_head_dim)))
    return expr.result(KV_HEADS, "(kv_lora_rank + qk_rope) ÷ (2 × head width): the KV heads GQA would need for the same cache",
                       shown=plain(expr.value))


def section(stack: Stack) -> dict[str, object]:
    """Document 07's facts on a stack: the dial on its model (or the 8B), the stack's own model as
    chosen, the published models, and the claims the page corrects."""
    ladder = kvcache.ladder(stack)
    base = _base(stack.model)
    base_budget = kvcache.ladder(replace(stack, model=base)).kv_budget
    long = MISTRAL_7B.max_position_embeddings
    settings = {key: setting(key, name, model, stack, base_budget, long) for key, (name, model) in dial(base).items()}
    chosen = setting("chosen", stack.model.name, stack.model, stack, ladder.kv_budget, long)
    kv = stack.kv_precision
    mla = settings["mla"].model
    naive_hybrid = naive_window_everywhere(GEMMA_2_9B, kv, GEMMA_2_9B.max_position_embeddings)
    true_hybrid = held(GEMMA_2_9B, kv, GEMMA_2_9B.max_position_embeddings, stack.block_size)
    naive_mla = naive_latent(DEEPSEEK_V3, kv)
    v3_per_token = kvcache.bytes_per_token(DEEPSEEK_V3, kv)
    latent_ops = latent_ops_per_position(DEEPSEEK_V3)
    multi_ops = multi_head_ops_per_position(DEEPSEEK_V3)
    gqa_ops = gqa_ops_per_position(base)
    return {
        "base": base,
        "group": Result(base.query_heads_per_kv_head, TIMES, formula="num_attention_heads ÷ num_key_value_heads",
                        worked=f"{base.num_attention_heads} ÷ {base.num_key_value_heads} = {base.query_heads_per_kv_head}×",
                        inputs=made_of(field(base, "num_attention_heads"), field(base, "num_key_value_heads"))),
        "settings": settings,
        "twin": multi_head_twin(base, base_budget, settings["mha"].per_user),
        "chosen": chosen,
        "kv_budget": base_budget,
        "long": given(long, TOKENS, "Mistral 7B's max_position_embeddings"),
        "mla_rank": given(mla.kv_lora_rank, COUNT, "4 × head_dim, DeepSeek-V2's proportion"),
        "mla_rope": given(mla.qk_rope_head_dim, COUNT, "head_dim ÷ 2, DeepSeek-V2's proportion"),
        "mla_as_gqa": _mla_as_gqa(DEEPSEEK_V3),
        "uptraining": given(GQA_UPTRAINING, PERCENT, GQA_SOURCE),
        "deepseek_v2": real(DEEPSEEK_V2, stack, long),
        "deepseek_v3": real(DEEPSEEK_V3, stack, long),
        "mistral": real(MISTRAL_7B, stack, long),
        "gemma": real(GEMMA_2_9B, stack, long),
        "models": {"deepseek_v2": DEEPSEEK_V2, "deepseek_v3": DEEPSEEK_V3, "mistral": MISTRAL_7B, "gemma": GEMMA_2_9B},
        "compute": {
            "gqa_ops": gqa_ops,
            "gqa_intensity": {key: intensity(gqa_ops, elements_per_layer(settings[key].model).value, kv)
                              for key in ("mha", "gqa", "mqa")},
            "latent_ops": latent_ops,
            "multi_head_ops": multi_ops,
            "latent_extra": (term(latent_ops, grouped(latent_ops.value)) / term(multi_ops, grouped(multi_ops.value))).result(
                RATIO, "latent-form operations ÷ multi-head-form operations, per position"),
            "latent_intensity": intensity(latent_ops, elements_per_layer(DEEPSEEK_V3).value, kv),
            "multi_head_intensity": intensity(multi_ops, DEEPSEEK_V3.num_attention_heads
                                              * (DEEPSEEK_V3.head_dim + DEEPSEEK_V3.v_head_dim), kv),
        },
        "projection": {
            "multi_head": key_projection(base, base.num_attention_heads),
            "gqa": key_projection(base, base.num_key_value_heads),
        },
        "naive": {
            "latent": naive_mla,
            "latent_off": ratio(v3_per_token, naive_mla, "true cache per token ÷ the claim"),
            "window": naive_hybrid,
            "window_true": true_hybrid,
            "window_off": (term(true_hybrid) / term(naive_hybrid)).result(RATIO, "true ÷ the claim"),
        },
    }



DIAL_LABELS = {"mha": "multi-head (MHA)", "gqa": "grouped-query (GQA)", "mqa": "multi-query (MQA)",
               "mla": "latent (MLA)", "window": "sliding window", "hybrid": "local/global hybrid"}


def chosen_model(key: str) -> Model:
    """The attention calculator's choice: a dial setting on the reference 8B, or a published model."""
    from ..specs.models import ATTENTION_MODELS
    if key in ATTENTION_MODELS:
        return ATTENTION_MODELS[key]
    return dial(LLAMA_3_1_8B)[key][1]


def curves(stack: Stack) -> list[dict]:
    """Cache per user (GiB) against tokens held, for each setting of the dial on the stack's model."""
    base = _base(stack.model)
    lengths = [2 ** k for k in range(10, 18) if not base.max_position_embeddings or 2 ** k <= base.max_position_embeddings]
    out = []
    for key, (name, model) in dial(base).items():
        ys = [held(model, stack.kv_precision, n, stack.block_size).value / 2 ** 30 for n in lengths]
        out.append({"name": name, "x": lengths, "y": ys})
    return out
