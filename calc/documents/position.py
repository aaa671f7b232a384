"""Position: how attention learns where each token sits. RoPE's frequencies and wavelengths for any
config, with and without its rope_scaling rule, and what a long context costs.

RoPE (Su et al. 2021) rotates each pair of a query's or key's dimensions by position × θᵢ, with
θᵢ = rope_theta^(−2i/d) for pair i of a d-wide head (i = 0 … d/2 − 1), exactly as the Llama code builds
`inv_freq`. A pair's wavelength, the positions it takes to turn once, is 2π ÷ θᵢ.

Scaling rules, as the model's own code defines them (nothing here is approximated or guessed):

- none: the frequencies as they are.
- "linear" (position interpolation, Chen et al. 2023): every frequency ÷ factor; transformers'
  `_compute_linear_scaling_rope_parameters`.
- "llama3": Meta's `apply_scaling` (llama-models, models/llama3/reference_impl/model.py) and
  transformers' `_compute_llama3_parameters` (src/transformers/modeling_rope_utils.py). With
  low = original ÷ low_freq_factor and high = original ÷ high_freq_factor, a pair of wavelength λ is
  unchanged if λ < high, divided by factor if λ > low, and otherwise blended:
  smooth = (original ÷ λ − low_freq_factor) ÷ (high_freq_factor − low_freq_factor),
  θ' = (1 − smooth) × θ ÷ factor + smooth × θ.

Any other rope_type ("yarn", "dynamic", "longrope", "ntk", …) is refused by name: UnsupportedScaling.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..specs.models import CATALOGUE, Model
from ..core.arith import field, made_of, term
from ..core.units import COUNT, PERCENT, RATIO, SECONDS, TOKENS, Result, Unit, given, grouped, plain

SOURCES = {
    "config": "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json",
    "llama3_meta": "https://github.com/meta-llama/llama-models/blob/main/models/llama3/reference_impl/model.py",
    "llama3_transformers": "https://github.com/huggingface/transformers/blob/main/src/transformers/modeling_rope_utils.py",
    "llama2_config": "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
    "rope": "Su et al. 2021, RoFormer: Enhanced Transformer with Rotary Position Embedding, arXiv:2104.09864",
    "position_interpolation": "Chen et al. 2023, Extending Context Window of Large Language Models via Positional "
                              "Interpolation, arXiv:2306.15595",
    "ntk": "bloc97 2023, NTK-Aware Scaled RoPE (r/LocalLLaMA); described in Peng et al. 2023, section 3.1",
    "yarn": "Peng et al. 2023, YaRN: Efficient Context Window Extension of Large Language Models, arXiv:2309.00071",
    "alibi": "Press et al. 2021, Train Short, Test Long: Attention with Linear Biases, arXiv:2108.12409",
    "llama3_paper": "Llama Team 2024, The Llama 3 Herd of Models, arXiv:2407.21783, sections 3.2 and 3.4.2",
    "ruler": "Hsieh et al. 2024, RULER: What's the Real Context Size of Your Long-Context Language Models?, "
             "arXiv:2404.06654; results table at https://github.com/NVIDIA/RULER",
}

IMPLEMENTED = ("none", "linear", "llama3")
NOT_IMPLEMENTED = {
    "dynamic": "dynamic NTK scaling raises the base as the sequence grows past the trained length",
    "ntk": "NTK-aware scaling raises the base instead of dividing the frequencies",
    "yarn": "YaRN blends each pair between interpolation and extrapolation and also scales attention's logits",
    "longrope": "LongRoPE carries a searched factor for every pair, a short and a long list",
    "su": "LongRoPE under its older name carries a searched factor for every pair",
    "mrope": "multimodal RoPE splits the pairs among time, height and width",
    "default": "",
}
LLAMA_2_THETA = 10_000.0  # rope_theta of meta-llama/Llama-2-7b-hf (and RoFormer's base)

# The Llama 3 paper (section 3.4.2): pre-training ran at 8K, then long-context pre-training raised the
# length in six stages to 128K on about 800B tokens, out of 15.6T for the 405B model (section 3.1).
LONG_CONTEXT_TOKENS = 800e9
PRETRAINING_TOKENS = 15.6e12
LONG_CONTEXT_STAGES = 6
# RULER (NVIDIA/RULER results table): Llama 3.1 8B claims 128K; the longest length at which it still
# beats Llama 2 7B's score at 4K (85.6), its "effective" length, is 32K.
RULER_EFFECTIVE = 32_768
RULER_CLAIMED = 131_072

LARGEST_HEAD_DIM = 4096  # 2,048 pairs; real heads are 64 to 256 wide

WAVELENGTH = Unit("tokens", 1, "tokens", 0, significant=3)
FACTOR = Unit("factor", 1, "", 2, exact_up_to=4)
SHARE = Unit("share", 1, "", 4)


class UnsupportedScaling(ValueError):
    """A rope_scaling rule calc does not implement: named, never approximated."""


@dataclass(frozen=True)
class Rule:
    """A rope_scaling rule with its parameters, as config.json spells them."""

    rope_type: str = "none"
    factor: float = 1.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original: int = 8192

    @property
    def scales(self) -> bool:
        return self.rope_type != "none"

    @property
    def high_wavelength(self) -> float:
        """Wavelengths shorter than this stay as trained (llama3)."""
        return self.original / self.high_freq_factor

    @property
    def low_wavelength(self) -> float:
        """Wavelengths longer than this are divided by the whole factor (llama3)."""
        return self.original / self.low_freq_factor


def _number(fields: dict, key: str, least: float, most: float, default: float | None = None) -> float:
    value = fields.get(key, default)
    if value is None:
        raise UnsupportedScaling(f"rope_scaling needs {key} for this rule")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UnsupportedScaling(f"rope_scaling's {key} must be a number, not {value!r}"[:200])
    if not least <= value <= most:
        raise UnsupportedScaling(f"rope_scaling's {key} must be between {plain(least)} and {plain(most)}, "
                                 f"not {plain(value) if abs(value) < 1e15 else f'{value:.3g}'}")
    return float(value)


def rule_of(model: Model) -> Rule:
    """The model's scaling rule, read from its config's rope_scaling; UnsupportedScaling if calc
    does not implement it or its parameters cannot be used."""
    fields = model.rope_scaling_fields
    if not fields:
        return Rule()
    kind = fields.get("rope_type", fields.get("type", "default"))
    kind = "none" if kind in ("default", None) else kind
    if kind == "none":
        return Rule()
    if kind not in IMPLEMENTED:
        why = NOT_IMPLEMENTED.get(kind, "")
        raise UnsupportedScaling(f"rope_type “{str(kind)[:40]}” is not a rule calc implements "
                                 f"(it knows none, linear and llama3){': ' + why if why else ''}; "
                                 f"no wavelengths are shown rather than a guess")
    factor = _number(fields, "factor", 1, 1000)
    if kind == "linear":
        return Rule("linear", factor)
    low = _number(fields, "low_freq_factor", 0.01, 1000)
    high = _number(fields, "high_freq_factor", 0.01, 1000)
    if low >= high:
        raise UnsupportedScaling(f"rope_scaling's low_freq_factor ({plain(low)}) must be below its "
                                 f"high_freq_factor ({plain(high)}), or the blend divides by zero or turns over")
    original = _number(fields, "original_max_position_embeddings", 1, 10_000_000)
    if original != int(original):
        raise UnsupportedScaling("rope_scaling's original_max_position_embeddings must be a whole number")
    return Rule("llama3", factor, low, high, int(original))


def editable_rule(model: Model) -> Rule:
    """The model's rule as a calculator edits it, one field at a time: read without checking, each
    parameter missing or unusable left at its default (rule_of checks the result)."""
    fields = model.rope_scaling_fields
    kind = fields.get("rope_type", fields.get("type"))
    kind = kind if isinstance(kind, str) and kind != "default" else "none"

    def number(key: str, default: float) -> float:
        value = fields.get(key)
        usable = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return float(value) if usable else default

    original = number("original_max_position_embeddings", model.max_position_embeddings or 8192)
    return Rule(kind, number("factor", 1.0), number("low_freq_factor", 1.0), number("high_freq_factor", 4.0),
                int(original) if original == int(original) else 8192)


def with_rule(model: Model, rule: Rule) -> Model:
    """The model with this rule written into its rope_scaling, as a config would carry it (parameters
    the rule does not use are kept, so a calculator can switch rules and back)."""
    fields = {"rope_type": rule.rope_type if rule.scales else "default", "factor": rule.factor,
              "low_freq_factor": rule.low_freq_factor, "high_freq_factor": rule.high_freq_factor,
              "original_max_position_embeddings": rule.original}
    return replace(model, rope_scaling=tuple(sorted(fields.items())))


def choose_rule(model: Model, kind: str) -> Model:
    """The model under another rope_type; one calc does not implement is refused by name."""
    if kind not in IMPLEMENTED:
        why = NOT_IMPLEMENTED.get(kind, "")
        raise UnsupportedScaling(f"rope_type “{kind[:40]}” is not a rule calc implements (it knows none, "
                                 f"linear and llama3){': ' + why if why else ''}")
    return with_rule(model, replace(editable_rule(model), rope_type=kind))


def inverse_frequency(theta: float, head_dim: int, i: int) -> float:
    """θᵢ = theta^(−2i/d): the angle pair i turns through per position, in radians."""
    return 1.0 / theta ** (2 * i / head_dim)


def scaled(frequency: float, rule: Rule) -> tuple[float, str]:
    """One pair's frequency under the rule, and which regime it falls in: unchanged, blended or divided."""
    if rule.rope_type == "none":
        return frequency, "unchanged"
    if rule.rope_type == "linear":
        return frequency / rule.factor, "divided"
    wavelength = 2 * math.pi / frequency
    if wavelength < rule.high_wavelength:
        return frequency, "unchanged"
    if wavelength > rule.low_wavelength:
        return frequency / rule.factor, "divided"
    smooth = (rule.original / wavelength - rule.low_freq_factor) / (rule.high_freq_factor - rule.low_freq_factor)
    return (1 - smooth) * frequency / rule.factor + smooth * frequency, "blended"


@dataclass(frozen=True)
class Pair:
    """One pair of dimensions: its index, frequency and wavelength before and after the rule."""

    index: int
    frequency: float
    scaled_frequency: float
    regime: str

    @property
    def wavelength(self) -> float:
        return 2 * math.pi / self.frequency

    @property
    def scaled_wavelength(self) -> float:
        return 2 * math.pi / self.scaled_frequency


def pairs(theta: float, head_dim: int, rule: Rule) -> tuple[Pair, ...]:
    out = []
    for i in range(head_dim // 2):
        frequency = inverse_frequency(theta, head_dim, i)
        new, regime = scaled(frequency, rule)
        out.append(Pair(i, frequency, new, regime))
    return tuple(out)


def _power(theta: float, i: int, head_dim: int) -> str:
    return f"{grouped(theta) if float(theta).is_integer() else plain(theta)}^({2 * i} ÷ {head_dim})"


def wavelength(theta: float, head_dim: int, i: int) -> Result:
    """Pair i's wavelength before any scaling: 2π ÷ θᵢ = 2π × theta^(2i/d)."""
    value = 2 * math.pi / inverse_frequency(theta, head_dim, i)
    return Result(value, WAVELENGTH, formula="2 × π × rope_theta^(2i ÷ head_dim)",
                  worked=f"2 × π × {_power(theta, i, head_dim)} = {WAVELENGTH.show(value)}")


def scaled_wavelength(theta: float, head_dim: int, rule: Rule, pair: Pair) -> Result:
    """Pair's wavelength after the rule, worked from its wavelength before."""
    before = wavelength(theta, head_dim, pair.index)
    value = pair.scaled_wavelength
    if pair.regime == "unchanged":
        worked = f"{before.worked}; unchanged by the rule"
    elif pair.regime == "divided":
        worked = f"{WAVELENGTH.precise(before.value, 7)} × {plain(rule.factor)} = {WAVELENGTH.show(value)}"
    else:
        worked = blend(rule, pair).worked
    return Result(value, WAVELENGTH, formula="the wavelength under the scaling rule", worked=worked)


def blend(rule: Rule, pair: Pair) -> Result:
    """A blended pair, step by step: smooth from its wavelength, then the new wavelength."""
    lam = pair.wavelength
    smooth = (rule.original / lam - rule.low_freq_factor) / (rule.high_freq_factor - rule.low_freq_factor)
    value = pair.scaled_wavelength
    lam_shown = WAVELENGTH.show(lam, 4)
    worked = (f"({grouped(rule.original)} ÷ {lam_shown} − {plain(rule.low_freq_factor)}) ÷ "
              f"({plain(rule.high_freq_factor)} − {plain(rule.low_freq_factor)}) = {smooth:.6f}; "
              f"{lam_shown} ÷ ((1 − {smooth:.6f}) ÷ {plain(rule.factor)} + {smooth:.6f}) = {WAVELENGTH.show(value)}")
    return Result(value, WAVELENGTH, formula="smooth = (original ÷ λ − low) ÷ (high − low); λ' = λ ÷ ((1 − smooth) ÷ factor + smooth)",
                  worked=worked)


def _count(count: int, what: str, worked: str) -> Result:
    return Result(count, COUNT, formula=what, worked=worked)


def regime_counts(theta: float, head_dim: int, rule: Rule, table: tuple[Pair, ...]) -> dict[str, Result]:
    """How many pairs the rule leaves, blends and divides, each with the wavelengths either side of
    its boundary so a reader can see where the line falls."""
    counts = {name: sum(1 for p in table if p.regime == name) for name in ("unchanged", "blended", "divided")}
    total = len(table)
    if rule.rope_type != "llama3":
        everything = f"{head_dim} ÷ 2 = {total}"
        return {name: _count(counts[name], f"pairs {name}", everything if counts[name] else "0") for name in counts}

    def edge(index: int) -> str:
        return wavelength(theta, head_dim, index).worked

    unchanged, blended = counts["unchanged"], counts["blended"]
    lines = {}
    steps = [f"{grouped(rule.original)} ÷ {plain(rule.high_freq_factor)} = {WAVELENGTH.show(rule.high_wavelength)}"]
    if unchanged:
        steps.append(edge(unchanged - 1))
    if unchanged < total:
        steps.append(edge(unchanged))
    lines["unchanged"] = "; ".join(steps)
    lines["divided"] = "; ".join(
        [f"{grouped(rule.original)} ÷ {plain(rule.low_freq_factor)} = {WAVELENGTH.show(rule.low_wavelength)}"]
        + ([edge(unchanged + blended - 1)] if unchanged + blended else [])
        + ([edge(unchanged + blended)] if unchanged + blended < total else []))
    lines["blended"] = f"{total} − {unchanged} − {counts['divided']} = {blended}"
    what = {"unchanged": "pairs with wavelength below original ÷ high_freq_factor",
            "blended": "pairs between the two bounds",
            "divided": "pairs with wavelength above original ÷ low_freq_factor"}
    return {name: _count(counts[name], what[name], lines[name]) for name in counts}


@dataclass(frozen=True)
class Dial:
    """One pair drawn as a dial: where its arrow points at each position of the figure."""

    index: int
    degrees_per_position: float
    arrows: tuple[tuple[int, float, float, float], ...]  # position, degrees, x, y on a unit circle


FIGURE_POSITIONS = 6


def dials(theta: float, head_dim: int, indices: tuple[int, ...]) -> tuple[Dial, ...]:
    out = []
    for i in indices:
        if i >= head_dim // 2:
            continue
        step = math.degrees(inverse_frequency(theta, head_dim, i))
        arrows = tuple((m, (m * step) % 360, math.cos(math.radians(m * step)), -math.sin(math.radians(m * step)))
                       for m in range(FIGURE_POSITIONS))
        out.append(Dial(i, step, arrows))
    return tuple(out)


FORMULA = "θᵢ = rope_theta^(−2i ÷ d) · angle = position × θᵢ · wavelength = 2π ÷ θᵢ"


def ntk_base(theta: float, head_dim: int, factor: float) -> Result:
    """NTK-aware scaling keeps the frequencies' shape and raises the base instead: bloc97's static
    formula, base × factor^(d ÷ (d − 2)) (Hugging Face implements only its dynamic variant), so the
    slowest pair slows by exactly the factor and the fastest not at all."""
    value = theta * factor ** (head_dim / (head_dim - 2))
    return Result(value, COUNT, formula="rope_theta × factor^(d ÷ (d − 2))",
                  worked=f"{plain(theta)} × {plain(factor)}^({head_dim} ÷ {head_dim - 2}) = {grouped(round(value))}")


def _seconds(milliseconds: Result) -> Result:
    value = milliseconds.value
    return Result(value, SECONDS, formula=milliseconds.formula,
                  worked=f"{milliseconds.worked} = {SECONDS.show(value)}", inputs=made_of(milliseconds))


def costs(stack, tokens: int) -> dict[str, Result]:
    """What holding and prefilling `tokens` positions costs on the stack's card: its cache, its prefill,
    and both against the model's original trained length."""
    from ..engine import kvcache, timing
    per_token = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    cache = kvcache.bytes_for_tokens(per_token, stack.model.tokens_cached(tokens))
    prefill = timing.prefill_time(stack, tokens)
    return {
        "tokens": given(tokens, TOKENS, "the context priced"),
        "cache": cache,
        "prefill": _seconds(prefill),
        "users": kvcache.ladder(replace(stack, context_limit=tokens)).users_worst,
    }


def growth(longer: Result, shorter: Result, what: str) -> Result:
    return (term(longer) / term(shorter)).result(RATIO, what)


def _resting(result: Result, *inputs: Result) -> Result:
    """A result whose worked line is written by hand (a power, a look-up), with what it rests on."""
    return replace(result, inputs=made_of(*inputs))


def section(stack, priced_context: int | None = None) -> dict[str, object]:
    """Document 08's figures on a stack: RoPE on its model, the scaling rule, and the cost of the span
    up to `priced_context` (None: the model's positions). Never raises for a model calc can load: a
    rule it cannot compute becomes `message`."""
    model = stack.model
    theta, head_dim = model.rope_theta, model.head_dim
    reach = priced_context or model.max_position_embeddings or stack.context_limit
    out: dict[str, object] = {"message": "", "sources": SOURCES, "training": training()}
    try:
        if head_dim < 2 or head_dim > LARGEST_HEAD_DIM:
            raise UnsupportedScaling(f"head_dim {grouped(head_dim)} leaves no pair to rotate" if head_dim < 2 else
                                     f"head_dim {grouped(head_dim)} is wider than any real head; calc stops at "
                                     f"{grouped(LARGEST_HEAD_DIM)}")
        rule = rule_of(model)
    except UnsupportedScaling as err:
        out["message"] = str(err)
        out["rule"] = "not computed"
        return out
    table = pairs(theta, head_dim, rule)
    last = table[-1]
    original = editable_rule(model).original
    at_reach = costs(stack, reach)
    at_original = costs(stack, min(original, 10_000_000))
    llama2_longest = wavelength(LLAMA_2_THETA, head_dim, last.index)
    longest = wavelength(theta, head_dim, last.index)
    first_blended = next((p for p in table if p.regime == "blended"), None)
    claimed = model.max_position_embeddings
    theta_read = field(model, "rope_theta", COUNT, "rope_theta")
    head_read = field(model, "head_dim", COUNT, "head_dim")
    factor = given(rule.factor, FACTOR, "rope_scaling factor")
    low = given(rule.low_freq_factor, FACTOR, "low_freq_factor")
    high = given(rule.high_freq_factor, FACTOR, "high_freq_factor")
    original_read = given(original, TOKENS, "original_max_position_embeddings")
    # the rule's own original length: the editable one's unless the config names no rule
    rule_original = term(original_read if rule.original == original else rule.original, grouped(rule.original))
    high_wavelength = (rule_original / term(high, plain(rule.high_freq_factor))).result(
        WAVELENGTH, "original ÷ high_freq_factor")
    low_wavelength = (rule_original / term(low, plain(rule.low_freq_factor))).result(
        WAVELENGTH, "original ÷ low_freq_factor")
    count = Result(len(table), COUNT, formula="head_dim ÷ 2", worked=f"{head_dim} ÷ 2 = {len(table)}",
                   inputs=made_of(head_read))
    counts = regime_counts(theta, head_dim, rule, table)
    if rule.rope_type == "llama3":
        unchanged = _resting(counts["unchanged"], high_wavelength, theta_read, head_read)
        divided = _resting(counts["divided"], low_wavelength, theta_read, head_read)
        blended = (term(count) - term(unchanged, str(int(unchanged.value))) - term(divided, str(int(divided.value)))).result(
            COUNT, counts["blended"].formula)
        counts = {"unchanged": unchanged, "blended": blended, "divided": divided}
    else:
        counts = {name: _resting(c, head_read) for name, c in counts.items()}
    longest = _resting(longest, theta_read, head_read)
    llama2_theta = given(LLAMA_2_THETA, COUNT, "Llama 2's rope_theta")
    llama2_longest = _resting(llama2_longest, llama2_theta, head_read)
    longest_after = scaled_wavelength(theta, head_dim, rule, last)
    longest_after = _resting(longest_after, *({"unchanged": (theta_read, head_read), "divided": (longest, factor)}.get(
        last.regime, (longest, original_read, low, high, factor))))
    claimed_read = given(claimed, TOKENS, "max_position_embeddings")
    out.update({
        "formula": FORMULA,
        "rule": rule.rope_type,
        "theta": theta_read,
        "head_dim": head_read,
        "pairs": count,
        "factor": factor,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original": original_read,
        "high_wavelength": high_wavelength,
        "low_wavelength": low_wavelength,
        "counts": counts,
        "fastest": _resting(wavelength(theta, head_dim, 0), theta_read, head_read),
        "fastest_degrees": Result(math.degrees(table[0].frequency), Unit("degrees", 1, "degrees", 1, significant=3),
                                  formula="θ₀ in degrees: 180 ÷ π ÷ rope_theta^0",
                                  worked=f"180 ÷ π ÷ {_power(theta, 0, head_dim)} = "
                                         f"{math.degrees(table[0].frequency):.1f}",
                                  inputs=made_of(theta_read, head_read)),
        "longest_before": longest,
        "longest_after": longest_after,
        "stretch": (term(longest_after, WAVELENGTH.precise(last.scaled_wavelength, 7))
                    / term(longest, WAVELENGTH.precise(last.wavelength, 7))).result(
            RATIO, "longest wavelength after ÷ before"),
        "llama2_longest": llama2_longest,
        "versus_llama2": growth(longest, llama2_longest, "longest wavelength ÷ Llama 2's at base 10,000"),
        "llama2_theta": llama2_theta,
        "theta_versus_llama2": (term(theta_read, plain(theta)) / term(llama2_theta, grouped(LLAMA_2_THETA))).result(
            RATIO, "rope_theta ÷ 10,000"),
        "claimed": claimed_read,
        "claimed_multiple": (term(claimed_read, grouped(claimed)) / term(original_read, grouped(original))).result(
            RATIO, "max_position_embeddings ÷ original"),
        "small_factor": given(editable_rule(CATALOGUE["llama-3.2-1b"]).factor, FACTOR,
                              "Llama 3.2 1B's rope_scaling factor, from its config.json"),
        "factor_reach": (term(original_read, grouped(original)) * term(factor, plain(rule.factor))).result(
            TOKENS, "original × factor"),
        "at_reach": at_reach,
        "at_original": at_original,
        "cache_growth": growth(at_reach["cache"], at_original["cache"], "cache at the span ÷ at the original length"),
        "prefill_growth": growth(at_reach["prefill"], at_original["prefill"], "prefill at the span ÷ at the original length"),
        "table": table,
        "dials": dials(theta, head_dim, (0, 8, last.index)),
        "chart_pairs": len(table),
    })
    if head_dim > 2:
        out["ntk_base"] = _resting(ntk_base(theta, head_dim, rule.factor), theta_read, factor, head_read)
        out["ntk_longest"] = _resting(wavelength(out["ntk_base"].value, head_dim, last.index), out["ntk_base"], head_read)
    if first_blended is not None:
        before = _resting(wavelength(theta, head_dim, first_blended.index), theta_read, head_read)
        out["example_blend"] = {"pair": given(first_blended.index, COUNT, "the first blended pair"),
                                "before": before,
                                "after": _resting(blend(rule, first_blended), original_read, before, low, high, factor)}
    return out


def training() -> dict[str, Result]:
    """How Llama 3 reached 128K: the long-context share of pre-training, and RULER's effective length."""
    share = LONG_CONTEXT_TOKENS / PRETRAINING_TOKENS
    long_tokens = given(LONG_CONTEXT_TOKENS / 1e9, COUNT, "long-context pre-training tokens, billions")
    all_tokens = given(PRETRAINING_TOKENS / 1e12, Unit("T", 1, "", 1), "pre-training tokens, trillions")
    effective = given(RULER_EFFECTIVE, TOKENS, "RULER's effective length for Llama 3.1 8B")
    return {
        "long_tokens": long_tokens,
        "all_tokens": all_tokens,
        "stages": LONG_CONTEXT_STAGES,
        # in billions on both sides, while the value divides the counts themselves: a line written by hand
        "long_share": Result(share, PERCENT, formula="long-context tokens ÷ all pre-training tokens",
                             worked=f"{grouped(LONG_CONTEXT_TOKENS / 1e9)} ÷ {grouped(PRETRAINING_TOKENS / 1e9)} = "
                                    f"{PERCENT.show(share, 1)}", inputs=made_of(long_tokens, all_tokens)),
        "ruler_effective": effective,
        "ruler_share": (term(effective, grouped(RULER_EFFECTIVE)) / term(RULER_CLAIMED)).result(
            PERCENT, "effective length ÷ claimed length"),
    }


def wavelength_curves(stack, priced_context: int | None = None) -> list[dict]:
    """Every pair's wavelength before and after the stack model's rule, and the two lengths to compare
    them with: the original trained length and the context priced (None: the claimed maximum). Empty
    when the rule is refused."""
    try:
        rule = rule_of(stack.model)
    except UnsupportedScaling:
        return []
    model = stack.model
    if not 2 <= model.head_dim <= LARGEST_HEAD_DIM:
        return []
    table = pairs(model.rope_theta, model.head_dim, rule)
    xs = [p.index + 1 for p in table]
    original = editable_rule(model).original
    reach = priced_context or model.max_position_embeddings or stack.context_limit
    return [
        {"name": "as trained (no scaling)", "x": xs, "y": [p.wavelength for p in table]},
        {"name": f"after {rule.rope_type} scaling" if rule.scales else "no rule in the config", "x": xs,
         "y": [p.scaled_wavelength for p in table]},
        {"name": f"original length, {grouped(original)}", "x": [xs[0], xs[-1]], "y": [original, original]},
        {"name": f"context, {grouped(reach)}", "x": [xs[0], xs[-1]], "y": [reach, reach]},
    ]
