"""Where a model's parameters live, counted from its config rather than read off a model card."""
from __future__ import annotations

from functools import lru_cache
from dataclasses import dataclass, replace

from ..specs.models import Model
from ..core.arith import Expr, config_term, field, made_of, term, total as summed
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
        model = self.model
        sparse = model.num_hidden_layers - self.dense_layers
        # each part as a result that remembers it was read off this count (params.embedding and so on)
        def part(name: str, shown: str) -> Expr:
            return term(field(self, name), shown)

        ends = (part("embedding", f"{grouped(self.embedding)} embedding")
                + part("unembedding", f"{grouped(self.unembedding)} output head")
                if self.unembedding else part("embedding", f"{grouped(self.embedding)} embedding tied to the output head"))
        final = part("final_norm", grouped(self.final_norm))
        per_layer = term(self._layer(self.feed_forward_per_layer, "one layer"), grouped(self.per_layer))
        if self.dense_layers:
            dense = term(self._layer(self.dense_feed_forward, "one dense layer"), grouped(self.per_dense_layer))
            expr = config_term(model, "first_k_dense_replace") * dense + term(sparse) * per_layer + ends + final
            formula = "dense layers × per dense layer + expert layers × per-layer + embedding + output head + final norm"
        else:
            expr = config_term(model, "num_hidden_layers") * per_layer + ends + final
            formula = "layers × per-layer + embedding + output head + final norm"
        return expr.result(COUNT, formula, shown=grouped(expr.value))

    def _layer(self, feed_forward: int, which: str) -> Result:
        """One layer's parameters, its three parts added, resting on the config fields they are counted from."""
        expr = (term(self.attention_per_layer, f"{grouped(self.attention_per_layer)} attention")
                + term(feed_forward, f"{grouped(feed_forward)} feed-forward")
                + term(self.norms_per_layer, f"{grouped(self.norms_per_layer)} norms"))
        return Result(expr.value, COUNT, formula=f"attention + feed-forward + norms, {which}", worked=f"{expr.text} = {grouped(expr.value)}",
                      inputs=made_of(*(field(self.model, name) for name in _layer_fields(self.model)
                                        if getattr(self.model, name) is not None)))  # a latent model may leave q_lora_rank unset

    @property
    def block_matrices(self) -> int:
        """The weights of every layer's attention and feed-forward matrices (with their few biases):
        what weight quantisation converts. Embedding, output head and norms are the rest."""
        return (self.model.num_hidden_layers * (self.attention_per_layer + self.feed_forward_per_layer)
                + self.dense_layers * (self.dense_feed_forward - self.feed_forward_per_layer))

    @property
    def feed_forward_share(self) -> Result:
        total = self.total
        return (config_term(self.model, "num_hidden_layers") * term(self.feed_forward_per_layer)
                / term(total, grouped(total.value))).result(PERCENT, "layers × feed-forward ÷ total")


def _layer_fields(model: Model) -> tuple[str, ...]:
    """The config fields one layer's parameter count is computed from."""
    if model.is_latent:
        names = ("hidden_size", "num_attention_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                 "v_head_dim", "intermediate_size", "moe_intermediate_size", "n_shared_experts")
    else:
        names = ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size")
    return names + (("num_local_experts",) if model.is_mixture_of_experts else ())



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
        count = summed(term(p.count, grouped(int(p.count.value))) for p in parts).result(
            COUNT, f"{name}: " + " + ".join(keys))
        inside = all(p.of_layers is not None for p in parts)
        return Component(key, name, key, "", count, _share(count, self.total, "all parameters"),
                         _share(count, self.layers, "the layers' parameters") if inside else None)


def _share(part: Result, whole: Result, of: str) -> Result:
    p, w = int(part.value), int(whole.value)
    if not w:
        return Result(0.0, SHARE, formula=f"component ÷ {of}", worked=f"{grouped(p)} ÷ {grouped(w)} = {SHARE.show(0.0)}",
                      inputs=made_of(part, whole))
    return (term(part, grouped(p)) / term(whole, grouped(w))).result(SHARE, f"component ÷ {of}")


def _counted(expr: Expr, formula: str) -> Result:
    """A whole count with its arithmetic: `expression = value`."""
    return expr.result(COUNT, formula, shown=grouped(expr.value))


def _rows(model: Model) -> list[tuple[str, str, str, bool, str, Expr | Result]]:
    """(key, name, group, in layers, shape of one copy, count with its arithmetic) for every component:
    the count an expression of config.json fields, or a result whose worked line is words."""
    hidden, inter = model.hidden_size, model.intermediate_size
    experts, vocab = model.num_local_experts, model.vocab_size
    q_width = model.num_attention_heads * model.head_dim
    kv_width = model.num_key_value_heads * model.head_dim
    config = {name: config_term(model, name) for name in ("hidden_size", "intermediate_size", "num_hidden_layers",
                                                        "num_local_experts", "vocab_size", "head_dim")}
    H, I = config["hidden_size"], config["intermediate_size"]
    copies = (config["num_hidden_layers"] * config["num_local_experts"] if experts > 1 else config["num_hidden_layers"])

    def matrix(rows: Expr, cols: Expr, bias: int, times: Expr) -> tuple[str, Expr]:
        one = rows * cols
        return f"{grouped(rows.value)} × {grouped(cols.value)}", times * (one + term(bias) if bias else one)

    qkv_bias = model.qkv_bias
    mlp_bias = model.mlp_bias
    rows: list[tuple[str, str, str, bool, str, Expr | Result]] = [
        ("embedding", "embedding table (a gather)", "embedding", False,
         f"{grouped(vocab)} × {grouped(hidden)}", config["vocab_size"] * config["hidden_size"])]
    for key, name, cols, bias in (("q", "query projection", q_width, q_width if qkv_bias else 0),
                                  ("k", "key projection", kv_width, kv_width if qkv_bias else 0),
                                  ("v", "value projection", kv_width, kv_width if qkv_bias else 0)):
        rows.append((key, name, "attention", True, *matrix(H, term(cols), bias, config["num_hidden_layers"])))
    rows.append(("o", "output projection", "attention", True,
                 *matrix(term(q_width), H, hidden if model.output_bias else 0, config["num_hidden_layers"])))
    for key, name, shape, bias in (("gate", "gate projection", (H, I), inter if mlp_bias else 0),
                                   ("up", "up projection", (H, I), inter if mlp_bias else 0),
                                   ("down", "down projection", (I, H), hidden if mlp_bias else 0)):
        rows.append((key, name, "feed-forward", True, *matrix(*shape, bias, copies)))
    if model.is_mixture_of_experts:
        router = config["num_hidden_layers"] * (config["hidden_size"] * config["num_local_experts"])
        rows.append(("router", "expert router", "router", True, f"{grouped(hidden)} × {grouped(experts)}", router))
    else:
        rows.append(("router", "expert router (none: one feed-forward per layer)", "router", True, "none",
                     Result(0, COUNT, worked="a dense model routes nothing")))
    per_layer = 4 if model.sandwich_norms else 2
    one_norm = term(per_layer) * config["hidden_size"]
    norm = config["num_hidden_layers"] * (one_norm + term(2) * config["head_dim"] if model.qk_norm else one_norm)
    count_words = "four per layer (before and after each block)" if model.sandwich_norms else "two per layer"
    rows.append(("norms", f"RMSNorm weights, {count_words}" + (" and q, k norms" if model.qk_norm else ""), "norms",
                 True, f"{grouped(hidden)}", norm))
    hidden_field = field(model, "hidden_size")
    rows.append(("final_norm", "final RMSNorm", "norms", False, f"{grouped(hidden)}",
                 Result(hidden, COUNT, worked=grouped(hidden), inputs=made_of(hidden_field))))
    if model.tie_word_embeddings:
        rows.append(("head", "LM head (tied: the embedding table, reused)", "LM head", False,
                     f"{grouped(hidden)} × {grouped(vocab)}",
                     Result(0, COUNT, worked="tied to the embedding table, no weights of its own")))
    else:
        rows.append(("head", "LM head", "LM head", False, f"{grouped(hidden)} × {grouped(vocab)}",
                     config["hidden_size"] * config["vocab_size"]))
    return rows


@lru_cache(maxsize=512)
def breakdown(model: Model) -> Breakdown:
    """The parameter count of `count_parameters`, row by row, each row's share of the whole and,
    for the rows inside the layers, of the layers alone."""
    rows = _rows(model)
    counts = [made.result(COUNT, f"{name}, every copy", shown=grouped(made.value)) if isinstance(made, Expr)
              else Result(made.value, COUNT, formula=f"{name}, every copy", worked=made.worked, inputs=made.inputs)
              for _, name, _, _, _, made in rows]
    inner = [c for c, row in zip(counts, rows) if row[3]]
    layers = summed(term(c, grouped(int(c.value))) for c in inner if c.value).result(
        COUNT, "every parameter inside the transformer layers")
    outer = [c for c, row in zip(counts, rows) if not row[3]]
    total = summed([term(layers, grouped(layers.value))] + [term(c, grouped(int(c.value))) for c in outer]).result(
        COUNT, "the layers + embedding + final norm + LM head")
    components = tuple(
        Component(key, name, group, shape, count, _share(count, total, "all parameters"),
                  _share(count, layers, "the layers' parameters") if inside else None)
        for (key, name, group, inside, shape, _), count in zip(rows, counts))
    return Breakdown(model=model, components=components, total=total, layers=layers)


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
    idle = _counted(config_term(model, "num_hidden_layers") * term(skipped) * term(one_expert),
                    "layers × unchosen experts × one expert")
    active = _counted(term(parts.total, grouped(total)) - config_term(model, "num_hidden_layers") * term(skipped)
                      * term(one_expert), "all parameters − layers × unchosen experts × one expert")
    sibling = replace(model, num_local_experts=1, num_experts_per_tok=1)
    sibling_total = count_parameters(sibling).total
    dense = int(sibling_total.value)
    dense_sibling = Result(dense, COUNT, formula="the same config with one feed-forward per layer",
                           worked=sibling_total.worked, inputs=made_of(sibling_total))
    naive = _counted(config_term(model, "num_local_experts") * term(dense_sibling, grouped(dense)),
                     "experts × the dense sibling's parameters")
    return Mixture(
        total=parts.total,
        active=active,
        active_share=_share(active, parts.total, "all parameters"),
        idle=idle,
        dense_sibling=dense_sibling,
        name_arithmetic=naive,
        overcount=_counted(term(naive, grouped(naive.value)) - term(parts.total, grouped(total)),
                           "experts × dense sibling − true total"),
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
    table = _counted(config_term(model, "vocab_size") * config_term(model, "hidden_size"), "vocabulary × hidden")
    whole = breakdown(model).total
    size = term(table, grouped(table.value))
    if model.tie_word_embeddings:
        tied = whole
        untied = _counted(term(tied, grouped(tied.value)) + size, "tied total + a second table")
        tied = _counted(term(untied, grouped(untied.value)) - size, "untied total − one table")
    else:
        untied = whole
        tied = _counted(term(untied, grouped(untied.value)) - size, "untied total − one table")
        untied = _counted(term(tied, grouped(tied.value)) + size, "tied total + a second table")
    return Tying(
        table=table,
        tied_total=tied,
        untied_total=untied,
        saving_share=_share(table, untied, "the untied total"),
        saving_bytes=(size * term(2, "2 B")).result(GIB_HELD, "table × 2 bytes (bf16)",
                                                    shown=f"{grouped(2 * table.value)} B = {GIB_HELD.show(2 * table.value)}"),
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
    layers = model.num_hidden_layers
    hidden = config_term(model, "hidden_size")
    factor = (term(4) + term(8)).result(COUNT, "the rule's constant: 4 for attention + 8 for the feed-forward")
    estimate = (term(factor, str(RULE_FACTOR)) * config_term(model, "num_hidden_layers") * hidden * hidden).result(
        COUNT, "12 × layers × hidden²")
    matrices = (parts.group("attention") + parts.group("feed-forward")) // layers
    return RuleOfThumb(
        factor=factor,
        estimate=estimate,
        coefficient=(term(matrices) / (hidden * hidden)).result(
            FRACTION, "one layer's attention and feed-forward matrices ÷ hidden²"),
        short_of_total=_short(estimate, parts.total),
        short_of_layers=_short(estimate, parts.layers),
    )


def _short(estimate: Result, actual: Result) -> Result:
    count = term(actual, grouped(int(actual.value)))
    return ((count - term(estimate, grouped(int(estimate.value)))) / count).result(SHARE, "(count − estimate) ÷ count")
