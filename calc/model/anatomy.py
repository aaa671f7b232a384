"""Where a model's parameters live, counted from its config rather than read off a model card."""
from __future__ import annotations

from functools import lru_cache
from dataclasses import dataclass, replace

from ..specs.models import Model
from ..core.units import COUNT, FRACTION, GIB_HELD, PERCENT, SHARE, Result, grouped


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


# ---- Component by component: the breakdown document 02 derives, every row from config.json fields.

@dataclass(frozen=True)
class Component:
    """One kind of weight, summed over every layer (and expert) that holds it.

    `shape` is one copy's matrix (rows × columns) or vector; `count` every copy together, with its
    arithmetic; `share` its part of all parameters; `of_layers` its part of the transformer layers'
    parameters, or None for what sits outside the layers (embedding, final norm, LM head)."""

    key: str
    name: str
    group: str
    shape: str
    count: Result
    share: Result
    of_layers: Result | None


GROUPS = ("embedding", "attention", "feed-forward", "router", "norms", "LM head")


@dataclass(frozen=True)
class Breakdown:
    """Every parameter of a model, component by component, in the order a token meets them."""

    model: Model
    components: tuple[Component, ...]
    total: Result
    layers: Result

    def __getitem__(self, key: str) -> Component:
        return next(c for c in self.components if c.key == key)

    def group(self, name: str) -> int:
        return sum(int(c.count.value) for c in self.components if c.group == name)

    def summed(self, key: str, name: str, keys: tuple[str, ...]) -> Component:
        """Several components as one row: their sum, its share of all and, if every part sits in
        the layers, of the layers alone."""
        parts = [self[k] for k in keys]
        count = sum(int(p.count.value) for p in parts)
        total, layers = int(self.total.value), int(self.layers.value)
        inside = all(p.of_layers is not None for p in parts)
        return Component(key, name, key, "", Result(count, COUNT, formula=f"{name}: " + " + ".join(keys),
                                                    worked=" + ".join(grouped(int(p.count.value)) for p in parts)
                                                    + f" = {grouped(count)}"),
                         _share(count, total, "all parameters"),
                         _share(count, layers, "the layers' parameters") if inside else None)


def _share(part: int, whole: int, of: str) -> Result:
    value = part / whole if whole else 0.0
    return Result(value, SHARE, formula=f"component ÷ {of}",
                  worked=f"{grouped(part)} ÷ {grouped(whole)} = {SHARE.show(value)}")


def _counted(value: int, formula: str, expression: str) -> Result:
    """A whole count with its arithmetic: `expression = value`."""
    return Result(value, COUNT, formula=formula, worked=f"{expression} = {grouped(value)}")


def _rows(model: Model) -> list[tuple[str, str, str, bool, str, int, str]]:
    """(key, name, group, in layers, shape of one copy, count, arithmetic) for every component."""
    hidden, inter, layers = model.hidden_size, model.intermediate_size, model.num_hidden_layers
    experts, vocab = model.num_local_experts, model.vocab_size
    q_width = model.num_attention_heads * model.head_dim
    kv_width = model.num_key_value_heads * model.head_dim
    copies = f"{layers} × {experts} × " if experts > 1 else f"{layers} × "
    each = layers * experts

    def matrix(rows: int, cols: int, bias: int, times: str, n: int) -> tuple[str, int, str]:
        one = rows * cols + bias
        sum_text = f"({grouped(rows)} × {grouped(cols)} + {grouped(bias)})" if bias else f"{grouped(rows)} × {grouped(cols)}"
        return f"{grouped(rows)} × {grouped(cols)}", n * one, f"{times}{sum_text} = {grouped(n * one)}"

    qkv_bias = model.qkv_bias
    mlp_bias = model.mlp_bias
    rows = [("embedding", "embedding table (a gather)", "embedding", False,
             f"{grouped(vocab)} × {grouped(hidden)}", vocab * hidden,
             f"{grouped(vocab)} × {grouped(hidden)} = {grouped(vocab * hidden)}")]
    for key, name, cols, bias in (("q", "query projection", q_width, q_width if qkv_bias else 0),
                                  ("k", "key projection", kv_width, kv_width if qkv_bias else 0),
                                  ("v", "value projection", kv_width, kv_width if qkv_bias else 0)):
        rows.append((key, name, "attention", True, *matrix(hidden, cols, bias, f"{layers} × ", layers)))
    rows.append(("o", "output projection", "attention", True,
                 *matrix(q_width, hidden, hidden if model.output_bias else 0, f"{layers} × ", layers)))
    for key, name, shape, bias in (("gate", "gate projection", (hidden, inter), inter if mlp_bias else 0),
                                   ("up", "up projection", (hidden, inter), inter if mlp_bias else 0),
                                   ("down", "down projection", (inter, hidden), hidden if mlp_bias else 0)):
        rows.append((key, name, "feed-forward", True, *matrix(*shape, bias, copies, each)))
    if model.is_mixture_of_experts:
        rows.append(("router", "expert router", "router", True,
                     *matrix(hidden, experts, 0, f"{layers} × ", layers)))
    else:
        rows.append(("router", "expert router (none: one feed-forward per layer)", "router", True, "none", 0,
                     "a dense model routes nothing"))
    per_layer = 4 if model.sandwich_norms else 2
    norm = per_layer * hidden + (2 * model.head_dim if model.qk_norm else 0)
    norm_text = (f"{layers} × ({per_layer} × {grouped(hidden)} + 2 × {model.head_dim})" if model.qk_norm
                 else f"{layers} × {per_layer} × {grouped(hidden)}")
    count_words = "four per layer (before and after each block)" if model.sandwich_norms else "two per layer"
    rows.append(("norms", f"RMSNorm weights, {count_words}" + (" and q, k norms" if model.qk_norm else ""), "norms",
                 True, f"{grouped(hidden)}", layers * norm, f"{norm_text} = {grouped(layers * norm)}"))
    rows.append(("final_norm", "final RMSNorm", "norms", False, f"{grouped(hidden)}", hidden, grouped(hidden)))
    if model.tie_word_embeddings:
        rows.append(("head", "LM head (tied: the embedding table, reused)", "LM head", False,
                     f"{grouped(hidden)} × {grouped(vocab)}", 0, "tied to the embedding table, no weights of its own"))
    else:
        rows.append(("head", "LM head", "LM head", False, f"{grouped(hidden)} × {grouped(vocab)}", vocab * hidden,
                     f"{grouped(hidden)} × {grouped(vocab)} = {grouped(vocab * hidden)}"))
    return rows


@lru_cache(maxsize=512)
def breakdown(model: Model) -> Breakdown:
    """The parameter count of `count_parameters`, row by row, each row's share of the whole and,
    for the rows inside the layers, of the layers alone."""
    rows = _rows(model)
    total = sum(row[5] for row in rows)
    layers = sum(row[5] for row in rows if row[3])
    components = tuple(
        Component(key, name, group, shape, Result(count, COUNT, formula=f"{name}, every copy", worked=worked),
                  _share(count, total, "all parameters"), _share(count, layers, "the layers' parameters") if inside else None)
        for key, name, group, inside, shape, count, worked in rows)
    outside = [c for c in components if c.of_layers is None]
    return Breakdown(
        model=model,
        components=components,
        total=Result(total, COUNT, formula="the layers + embedding + final norm + LM head",
                     worked=f"{grouped(layers)} + " + " + ".join(grouped(int(c.count.value)) for c in outside)
                            + f" = {grouped(total)}"),
        layers=Result(layers, COUNT, formula="every parameter inside the transformer layers",
                      worked=" + ".join(grouped(int(c.count.value)) for c in components if c.of_layers is not None and c.count.value)
                             + f" = {grouped(layers)}"),
    )


def itemised(model: Model) -> str:
    """Why the part-by-part breakdown cannot show this model ("" when its rows add up to the count)."""
    if model.kv_lora_rank:
        return (f"{model.name} uses latent attention, which this page's part-by-part table does not itemise yet; "
                f"document 07 sizes its cache and counts its {grouped(count_parameters(model).total.value)} parameters")
    rows, whole = breakdown(model).total.value, count_parameters(model).total.value
    if rows != whole:
        return (f"{model.name}'s layers hold parts this table does not itemise yet: its rows add up to {grouped(rows)} "
                f"of {grouped(whole)} parameters, so it is not drawn")
    return ""


@dataclass(frozen=True)
class Mixture:
    """What a mixture of experts holds against what one token uses. For a dense model the two agree."""

    total: Result
    active: Result
    active_share: Result
    idle: Result
    dense_sibling: Result
    name_arithmetic: Result
    overcount: Result


def mixture(model: Model) -> Mixture:
    parts = breakdown(model)
    total = int(parts.total.value)
    experts, chosen, layers = model.num_local_experts, model.num_experts_per_tok, model.num_hidden_layers
    one_expert = parts.group("feed-forward") // (layers * experts)
    skipped = experts - chosen
    idle = layers * skipped * one_expert
    active = total - idle
    sibling = replace(model, num_local_experts=1, num_experts_per_tok=1)
    dense = int(count_parameters(sibling).total.value)
    naive = experts * dense
    return Mixture(
        total=parts.total,
        active=_counted(active, "all parameters − layers × unchosen experts × one expert",
                        f"{grouped(total)} − {layers} × {skipped} × {grouped(one_expert)}"),
        active_share=_share(active, total, "all parameters"),
        idle=_counted(idle, "layers × unchosen experts × one expert", f"{layers} × {skipped} × {grouped(one_expert)}"),
        dense_sibling=Result(dense, COUNT, formula="the same config with one feed-forward per layer",
                             worked=count_parameters(sibling).total.worked),
        name_arithmetic=_counted(naive, "experts × the dense sibling's parameters", f"{experts} × {grouped(dense)}"),
        overcount=_counted(naive - total, "experts × dense sibling − true total", f"{grouped(naive)} − {grouped(total)}"),
    )


@dataclass(frozen=True)
class Tying:
    """Tied embeddings: one vocabulary × hidden table serves as both the embedding and the LM head."""

    table: Result
    tied_total: Result
    untied_total: Result
    saving_share: Result
    saving_bytes: Result


def tying(model: Model) -> Tying:
    table = model.vocab_size * model.hidden_size
    total = int(breakdown(model).total.value)
    tied, untied = (total, total + table) if model.tie_word_embeddings else (total - table, total)
    held = 2 * table
    return Tying(
        table=_counted(table, "vocabulary × hidden", f"{grouped(model.vocab_size)} × {grouped(model.hidden_size)}"),
        tied_total=_counted(tied, "untied total − one table", f"{grouped(untied)} − {grouped(table)}"),
        untied_total=_counted(untied, "tied total + a second table", f"{grouped(tied)} + {grouped(table)}"),
        saving_share=_share(table, untied, "the untied total"),
        saving_bytes=Result(held, GIB_HELD, formula="table × 2 bytes (bf16)",
                            worked=f"{grouped(table)} × 2 B = {grouped(held)} B = {GIB_HELD.show(held)}"),
    )


@dataclass(frozen=True)
class RuleOfThumb:
    """The old estimate, parameters ≈ 12 × layers × hidden², against the count."""

    factor: Result
    estimate: Result
    coefficient: Result
    short_of_total: Result
    short_of_layers: Result


RULE_FACTOR = 12


def rule_of_thumb(model: Model) -> RuleOfThumb:
    """12 × layers × hidden² holds for multi-head attention (4 hidden² per layer) and a two-matrix
    feed-forward four times as wide (8 hidden²); grouped KV heads and SwiGLU's three matrices move it."""
    parts = breakdown(model)
    hidden, layers = model.hidden_size, model.num_hidden_layers
    square = hidden * hidden
    estimate = RULE_FACTOR * layers * square
    matrices = (parts.group("attention") + parts.group("feed-forward")) // layers
    coefficient = matrices / square
    total, inside = int(parts.total.value), int(parts.layers.value)
    return RuleOfThumb(
        factor=Result(RULE_FACTOR, COUNT, formula="the rule's constant: 4 for attention + 8 for the feed-forward",
                      worked=f"4 + 8 = {RULE_FACTOR}"),
        estimate=Result(estimate, COUNT, formula="12 × layers × hidden²",
                        worked=f"{RULE_FACTOR} × {layers} × {grouped(hidden)} × {grouped(hidden)} = {grouped(estimate)}"),
        coefficient=Result(coefficient, FRACTION, formula="one layer's attention and feed-forward matrices ÷ hidden²",
                           worked=(f"{grouped(matrices)} ÷ ({grouped(hidden)} × {grouped(hidden)}) = "
                                   f"{FRACTION.show(coefficient)}")),
        short_of_total=_short(estimate, total),
        short_of_layers=_short(estimate, inside),
    )


def _short(estimate: int, actual: int) -> Result:
    value = (actual - estimate) / actual
    return Result(value, SHARE, formula="(count − estimate) ÷ count",
                  worked=f"({grouped(actual)} − {grouped(estimate)}) ÷ {grouped(actual)} = {SHARE.show(value)}")
