"""Reading a calculator's inputs: the strings a form holds, and a pasted config.json.

Each field turns one string into a value or a message naming what is wrong, and knows how its
value changes what it sets: the stack (the system served) or, for a `document_input`, the documents'
own inputs (calc.specs.inputs.DocumentInputs). Nothing here raises anything but InputError or
ValueError with a message meant for the reader.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Callable

from .specs.cards import CARDS
from .core.echo import excerpt, hidden_characters, visible
from .specs.models import ATTENTION_MODELS, CATALOGUE, ConfigError, Model
from .specs.precision import KV_PRECISIONS, PRECISIONS
from .specs.inputs import DocumentInputs
from .specs.stack import Stack
from .core.units import grouped

CUSTOM = "custom"
PASTED = "pasted model"  # where a calculator's cross-field checks find the model read from a pasted config
LARGEST_CONFIG = 200_000
DEEPEST_CONFIG = 32
LONGEST_CONFIG_NUMBER = 30
LONGEST_NUMBER = 40
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")
_ESCAPES = re.compile(r"\\.", re.DOTALL)
_STRINGS = re.compile(r'"[^"]*"')
_BRACKETS = re.compile(r"[\[\]{}]")


class InputError(ValueError):
    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class NumberField:
    """A number typed by the reader; `apply` sets it on the stack, `current` reads the stack's own
    (a `document_input` sets and reads the documents' inputs, calc.fields.applied). An optional field
    may be left empty, and then changes nothing."""

    name: str
    label: str
    minimum: float
    maximum: float
    whole: bool
    unit: str
    current: Callable[[Stack], float] | Callable[[Stack, DocumentInputs], float]  # the second for a document input
    apply: Callable[[Stack, float], Stack] | Callable[[DocumentInputs, float], DocumentInputs]
    optional: bool = False
    places: int = 0
    hint: str = ""
    signed_zero: bool = False  # keep −0 as typed (a float format stores its sign); elsewhere −0 is 0
    most_places: int | None = None  # decimal places a worked line can print (units.plain prints six)
    document_input: bool = False

    def default(self, stack: Stack, inputs: DocumentInputs) -> str:
        if self.optional:
            return ""
        value = current(self, stack, inputs)
        return str(int(value)) if self.whole else f"{value:.{self.places}f}"

    def parse(self, raw: Any) -> float | None:
        text = str(raw if raw is not None else "").strip()
        if not text:
            if self.optional:
                return None
            raise ValueError(f"{self.label} is empty: enter a number")
        if len(text) > LONGEST_NUMBER:
            # Only the start is quoted, with no count: the page may have cut a long paste before Python sees it.
            raise ValueError(f"{self.label} is too long to be a number: “{visible(text[:24])}…”")
        hidden = hidden_characters(text)
        if hidden:
            raise ValueError(f"{self.label} holds a character that does not print ({', '.join(hidden[:3])}): "
                             f"“{excerpt(text, 24)}”; type the number again")
        if "," in text:
            text = self._without_thousands_commas(text)
        if "_" in text:  # Python reads 1_000 as a thousand; a reader who typed it meant something else
            raise ValueError(f"{self.label} must be a number, not “{excerpt(text, 24)}”")
        try:
            value = float(text.replace("\u2212", "-"))  # the page prints a true minus; a reader may copy it
        except ValueError:
            raise ValueError(f"{self.label} must be a number, not “{excerpt(text, 24)}”") from None
        if not math.isfinite(value):
            raise ValueError(f"{self.label} must be a finite number")
        if self.whole and value != int(value):
            counted = f" of {self.unit}" if self.unit and not self.unit.startswith(("per ", "%", "$")) else ""
            raise ValueError(f"{self.label} must be a whole number{counted}")
        if value < self.minimum or value > self.maximum:
            unit = f" {self.unit}" if self.unit else ""
            raise ValueError(f"{self.label} must be between {_number(self.minimum)} and {_number(self.maximum)}{unit}")
        if self.most_places is not None and self._places(text) > self.most_places:
            raise ValueError(f"{self.label} takes at most {self.most_places} decimal places")
        if self.whole:
            return int(value)
        return value if self.signed_zero else value + 0.0  # + 0.0 turns −0 into 0

    @staticmethod
    def _places(text: str) -> int:
        """Decimal places the typed number needs (1e-9 needs nine, 0.50 one)."""
        mantissa, _, exponent = text.lower().partition("e")
        decimals = mantissa.partition(".")[2].rstrip("0")
        return max(0, len(decimals) - int(exponent or 0))

    def _without_thousands_commas(self, text: str) -> str:
        """A comma is taken only as a thousands separator; a decimal comma is refused, never guessed."""
        if _THOUSANDS.fullmatch(text):
            return text.replace(",", "")
        as_point = text.replace(",", ".")
        try:
            float(as_point)
        except ValueError:
            raise ValueError(f"{self.label}: a comma may only separate groups of three digits") from None
        raise ValueError(f"{self.label}: write decimals with a point ({excerpt(as_point, 24)}), not a comma")

    def shown(self, value: float | None) -> str:
        if value is None:
            return ""
        number = grouped(value) if self.whole else _decimal(value)
        unit = self.unit
        if value == 1 and unit.isalpha() and len(unit) > 2 and unit.endswith("s"):
            unit = unit[:-1]  # 1 GPU, 1 stage, 1 sequence
        return f"{number}{unit}" if unit.startswith("%") else f"{number} {unit}".strip()


@dataclass(frozen=True)
class ChoiceField:
    """One of a fixed list; `choices` maps the form's key to what the reader sees."""

    name: str
    label: str
    choices: dict[str, str]
    current: Callable[[Stack], str] | Callable[[Stack, DocumentInputs], str]  # the second for a document input
    apply: Callable[[Stack, str], Stack] | Callable[[DocumentInputs, str], DocumentInputs]
    unit: str = ""
    hint: str = ""
    optional: bool = False
    document_input: bool = False

    def default(self, stack: Stack, inputs: DocumentInputs) -> str:
        return current(self, stack, inputs)

    def parse(self, raw: Any) -> str:
        if not isinstance(raw, str) or raw not in self.choices:
            raise ValueError(f"{self.label}: choose one of {', '.join(self.choices.values())}")
        return raw

    def shown(self, value: str) -> str:
        return self.choices.get(value, "")


@dataclass(frozen=True)
class TextField:
    """Text typed or pasted by the reader, such as a command line: only ever text. `apply` reads it
    into the stack and raises ValueError with a message when it cannot."""

    name: str
    label: str
    longest: int
    current: Callable[[Stack], str] | Callable[[Stack, DocumentInputs], str]  # the second for a document input
    apply: Callable[[Stack, str], Stack] | Callable[[DocumentInputs, str], DocumentInputs]
    unit: str = ""
    hint: str = ""
    rows: int = 3
    clean: Callable[[str], str] | None = None  # what to take out before the text is checked (a log's colours)
    document_input: bool = False

    def default(self, stack: Stack, inputs: DocumentInputs) -> str:
        return current(self, stack, inputs)

    def parse(self, raw: Any) -> str:
        text = raw if isinstance(raw, str) else ""
        if self.clean and len(text) <= self.longest:
            text = self.clean(text)
        if not text.strip():
            raise ValueError(f"{self.label} is empty: paste or type it")
        if len(text) > self.longest:
            # Only the start is quoted, with no count: the page may have cut a long paste before Python sees it.
            raise ValueError(f"{self.label} is over {self.longest:,} characters: “{visible(text[:24])}…”")
        spaced = re.sub(r"[\n\r\t]", "", text)  # line breaks and tabs only space it
        hidden = [] if spaced.isprintable() else hidden_characters(spaced)
        if hidden:
            raise ValueError(f"{self.label} holds a character that does not print ({', '.join(hidden[:3])}); "
                             f"type it again")
        return text

    def shown(self, value: str) -> str:
        return excerpt(" ".join(value.split()), 120)


Field = NumberField | ChoiceField | TextField


def current(field: Field, stack: Stack, inputs: DocumentInputs) -> Any:
    """The field's value before the reader changes it: the stack's own or, for a document input, the
    inputs' (which may follow the stack: document 08 prices the model's own positions unless told)."""
    return field.current(stack, inputs) if field.document_input else field.current(stack)


def applied(field: Field, stack: Stack, inputs: DocumentInputs, value: Any) -> tuple[Stack, DocumentInputs]:
    """The stack and the documents' inputs with the field's value set on the one it belongs to."""
    if field.document_input:
        return stack, field.apply(inputs, value)
    return field.apply(stack, value), inputs


def _key(table: dict[str, Any], value: Any) -> str:
    return next(k for k, v in table.items() if v == value)


MODEL = ChoiceField("model", "Model", {**{k: m.name for k, m in CATALOGUE.items()}, CUSTOM: "Your config.json"},
                    current=lambda s: _key(CATALOGUE, s.model),
                    apply=lambda s, key: replace(s, model=CATALOGUE[key]) if key != CUSTOM else s)
CARD = ChoiceField("card", "Card", {k: c.name for k, c in CARDS.items()},
                   current=lambda s: _key(CARDS, s.card), apply=lambda s, key: replace(s, card=CARDS[key]))
WEIGHTS = ChoiceField("weights", "Weight precision", {k: f"{p.name} · {p.bits:g} bits" for k, p in PRECISIONS.items()},
                      current=lambda s: s.weight_precision.name,
                      apply=lambda s, key: replace(s, weight_precision=PRECISIONS[key]))
KV = ChoiceField("kv", "KV cache precision", {k: f"{p.name} · {p.bits:g} bits" for k, p in KV_PRECISIONS.items()},
                 current=lambda s: s.kv_precision.name, apply=lambda s, key: replace(s, kv_precision=KV_PRECISIONS[key]))
CONTEXT_LIMIT = NumberField("context_limit", "Context limit", 1, 10_000_000, True, "tokens",
                            current=lambda s: s.context_limit, apply=lambda s, v: replace(s, context_limit=v))
UTILISATION = NumberField("utilisation", "Utilisation", 0.05, 1.0, False, "", places=2,
                          current=lambda s: s.gpu_memory_utilization,
                          apply=lambda s, v: replace(s, gpu_memory_utilization=v))
TOKEN_BUDGET = NumberField("token_budget", "Token budget per step", 16, 1_000_000, True, "tokens", optional=True,
                           current=lambda s: 0,
                           apply=lambda s, v: replace(s, serving=replace(s.serving, max_num_batched_tokens=v)),
                           hint="--max-num-batched-tokens, which sets the profiled activation peak; empty: "
                                "vLLM's default for the card")
CONVERSATION = NumberField("conversation", "Typical conversation", 1, 10_000_000, True, "tokens",
                           current=lambda s: s.typical_conversation, apply=lambda s, v: replace(s, typical_conversation=v))
PROMPT = NumberField("prompt", "Prompt", 1, 10_000_000, True, "tokens", current=lambda s: s.workload.prompt,
                     apply=lambda s, v: replace(s, workload=replace(s.workload, prompt=v)))
OUTPUT = NumberField("output", "Output", 1, 1_000_000, True, "tokens", current=lambda s: s.workload.output,
                     apply=lambda s, v: replace(s, workload=replace(s.workload, output=v)))
BATCH = NumberField("batch", "Batch", 1, 100_000, True, "sequences", optional=True,
                    current=lambda s: s.workload.batch or 0,
                    apply=lambda s, v: replace(s, workload=replace(s.workload, batch=v)),
                    hint="empty: every sequence the cache admits")


CHARACTERS = NumberField("characters", "Prompt", 1, 10_000_000, True, "characters", document_input=True,
                         current=lambda s, i: i.text.characters,
                         apply=lambda i, v: replace(i, text=replace(i.text, characters=v)))
TEXT_KIND = ChoiceField("kind", "Kind of text", {"english": "English prose", "french": "French prose", "chinese": "Chinese prose",
                                                "python": "Python source"},
                        document_input=True, current=lambda s, i: i.text.kind,
                        apply=lambda i, key: replace(i, text=replace(i.text, kind=key)))


def _decimal(value: float) -> str:
    """A typed decimal written out in full (1e-07 as 0.0000001), grouped, without trailing zeros."""
    text = repr(float(value))
    if "e-" in text:
        mantissa, exponent = text.split("e-")
        digits = mantissa.lstrip("-").replace(".", "")
        text = f"{'-' if mantissa.startswith('-') else ''}0.{'0' * (int(exponent) - 1)}{digits}"
    elif "e" not in text:
        text = f"{float(value):,}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def beyond_positions(model: Model, tokens: int) -> str:
    """"" if `tokens` fit the model's positions; otherwise the first half of a message saying so."""
    longest = model.max_position_embeddings
    return f"{model.name} reaches at most {grouped(longest)} positions" if longest and tokens > longest else ""


def _within_positions(stack: Stack, tokens: int, what: str) -> None:
    beyond = beyond_positions(stack.model, tokens)
    if beyond:
        raise ValueError(f"{beyond}; {what}")


def _hold(stack: Stack, tokens: int) -> Stack:
    _within_positions(stack, tokens, "a sequence cannot hold more tokens than that")
    return replace(stack, workload=replace(stack.workload, held=tokens))


HELD = NumberField("held", "Tokens held", 1, 10_000_000, True, "per sequence", current=lambda s: s.workload.tokens_held,
                   apply=_hold, hint="prompt and output so far")
COMPUTE_SCALE = NumberField("compute_scale", "Compute speed", 1, 120, False, "%", places=0,
                            current=lambda s: 100 * s.efficiency.compute,
                            apply=lambda s, v: replace(s, efficiency=replace(s.efficiency, compute=v / 100)),
                            hint="of the measured kernels' speed where they wait on arithmetic")
BANDWIDTH_SCALE = NumberField("bandwidth_scale", "Memory speed", 1, 120, False, "%", places=0,
                              current=lambda s: 100 * s.efficiency.bandwidth,
                              apply=lambda s, v: replace(s, efficiency=replace(s.efficiency, bandwidth=v / 100)),
                              hint="of the measured kernels' speed where they wait on memory")


def parse_config(text: Any) -> Model:
    """A pasted config.json, checked field by field; errors name the field (or the JSON position)."""
    if not isinstance(text, str) or not text.strip():
        raise InputError({"config": "paste the contents of a config.json first"})
    text = text.lstrip("\ufeff")
    if len(text) > LARGEST_CONFIG:
        raise InputError({"config": f"that is over {LARGEST_CONFIG:,} characters; a config.json is a few thousand"})
    depth = nesting_depth(text)
    if depth > DEEPEST_CONFIG:
        raise InputError({"config": f"it nests {depth:,} levels deep; a config.json nests a few, "
                                    f"and calc reads none deeper than {DEEPEST_CONFIG}"})
    try:
        config = json.loads(text, parse_constant=_reject_constant, parse_int=_config_integer)
    except json.JSONDecodeError as err:
        raise InputError({"config": f"not valid JSON: {err.msg} (line {err.lineno}, column {err.colno})"}) from None
    except ValueError as err:
        raise InputError({"config": str(err)}) from None
    try:
        return Model.from_config(config, source="config.json pasted by the reader")
    except ConfigError as err:
        whole = err.field == "config"  # the paste as a whole is at fault: the message sits under it already
        raise InputError({"config": err.problem if whole else f"{err.field}: {err.problem}"}) from None


def nesting_depth(text: str) -> int:
    """How deep the brackets of a JSON text nest, outside its strings: read before parsing, so a
    hostile paste cannot exhaust the parser's stack. Escapes go first, so every quote left ends or
    starts a string and each pass is linear in the length."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRINGS.sub("", _ESCAPES.sub("", text))):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not valid JSON: {name} is not a number JSON allows")


def _config_integer(digits: str) -> int:
    if len(digits.lstrip("-")) > LONGEST_CONFIG_NUMBER:
        raise ValueError(f"a number in it is {len(digits.lstrip('-')):,} digits long; no config field needs "
                         f"more than {LONGEST_CONFIG_NUMBER}")
    return int(digits)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def _attention_choice(stack: Stack, key: str) -> Stack:
    from .documents.attention import chosen_model
    return replace(stack, model=chosen_model(key)) if key != CUSTOM else stack


ATTENTION_SETTING = ChoiceField(
    "model", "Attention",
    {"mha": "8B · multi-head", "gqa": "8B · grouped-query", "mqa": "8B · multi-query", "mla": "8B · latent",
     "window": "8B · sliding window", "hybrid": "8B · local/global", "deepseek-v2": "DeepSeek-V2",
     "deepseek-v3": "DeepSeek-V3", "mistral-7b": "Mistral 7B v0.1", "gemma-2-9b": "Gemma 2 9B",
     CUSTOM: "Your config.json"},
    current=lambda s: "gqa", apply=_attention_choice,
    hint="8B: a setting of the dial on Llama 3.1 8B's shape; or a published config, or your own")
# The attention calculator has no typical-conversation field: a limit below the stack's typical
# conversation shortens that conversation too, so the paged figures stay within the limit.
def _attention_limit(stack: Stack, tokens: int) -> Stack:
    _within_positions(stack, tokens, "a context limit past that is one it cannot serve")
    return replace(stack, context_limit=tokens, typical_conversation=min(stack.typical_conversation, tokens))


ATTENTION_LIMIT = replace(CONTEXT_LIMIT, apply=_attention_limit)


# Document 08: RoPE's base, the head's width, the scaling rule and the context priced.
def _rope(change):
    """An apply that edits the model's RoPE through calc.documents.position, turning its refusals into messages."""
    def apply(stack: Stack, value: Any) -> Stack:
        from .documents import position
        try:
            return replace(stack, model=change(position, stack.model, value))
        except position.UnsupportedScaling as err:
            raise ValueError(str(err)) from None
    return apply


def _rule_field(name: str):
    return _rope(lambda position, model, v: position.with_rule(model, replace(position.editable_rule(model), **{name: v})))


def _rule_value(name: str) -> Callable[[Stack], float]:
    def current(stack: Stack) -> float:
        from .documents import position
        return getattr(position.editable_rule(stack.model), name)
    return current


def _even_head(position, model: Model, value: int) -> Model:
    if value % 2:
        raise position.UnsupportedScaling(f"head_dim must be even: RoPE turns the head's dimensions in pairs, and "
                                          f"{grouped(value)} leaves one over")
    return replace(model, head_dim_given=value)


ROPE_THETA = NumberField("rope_theta", "rope_theta", 2, 10_000_000_000, False, "", places=0,
                         current=lambda s: s.model.rope_theta,
                         apply=_rope(lambda position, model, v: replace(model, rope_theta=v)), hint="RoPE's base")
HEAD_DIM = NumberField("head_dim", "head_dim", 2, 1024, True, "", current=lambda s: s.model.head_dim,
                       apply=_rope(_even_head), hint="dimensions per head; pairs are half")
ROPE_TYPE = ChoiceField("rope_type", "Scaling rule", {"none": "none", "linear": "linear (position interpolation)",
                                                       "llama3": "llama3", "dynamic": "dynamic (NTK)", "yarn": "yarn",
                                                       "longrope": "longrope"},
                        current=_rule_value("rope_type"),
                        apply=_rope(lambda position, model, v: position.choose_rule(model, v)))
ROPE_FACTOR = NumberField("factor", "factor", 1, 1000, False, "", places=1, current=_rule_value("factor"),
                          apply=_rule_field("factor"))
LOW_FREQ = NumberField("low_freq_factor", "low_freq_factor", 0.01, 1000, False, "", places=1,
                       current=_rule_value("low_freq_factor"), apply=_rule_field("low_freq_factor"))
HIGH_FREQ = NumberField("high_freq_factor", "high_freq_factor", 0.01, 1000, False, "", places=1,
                        current=_rule_value("high_freq_factor"), apply=_rule_field("high_freq_factor"))
ORIGINAL = NumberField("original", "Original length", 1, 10_000_000, True, "tokens",
                       current=_rule_value("original"), apply=_rule_field("original"),
                       hint="original_max_position_embeddings")
def _store_number(inputs: DocumentInputs, value: float) -> DocumentInputs:
    from .documents.quantisation import with_number
    return with_number(inputs, value)


NUMBER = NumberField("number", "A number", -1_000_000_000, 1_000_000_000, False, "", places=1, document_input=True,
                     current=lambda s, i: i.stored_number, apply=_store_number,
                     hint="any real number, stored in every format", signed_zero=True)
REACH = NumberField("context", "Context", 1, 10_000_000, True, "tokens", document_input=True,
                    current=lambda s, i: i.priced_context or s.model.max_position_embeddings,
                    apply=lambda i, v: replace(i, priced_context=v), hint="priced on the reference card")


# Document 10: the block size and the cache-operations assumptions (calc.specs.inputs.CacheOps).
def _cache(name: str, scale: float = 1):
    def apply(inputs: DocumentInputs, value: float) -> DocumentInputs:
        return replace(inputs, cache=replace(inputs.cache, **{name: value / scale if scale != 1 else value}))
    return apply


BLOCK_SIZE = NumberField("block_size", "Block size", 1, 1_024, True, "tokens", current=lambda s: s.block_size,
                         apply=lambda s, v: replace(s, block_size=v), hint="--block-size")
SPREAD = NumberField("spread", "Length spread (±)", 0, 10_000_000, True, "tokens", document_input=True,
                     current=lambda s, i: i.cache.spread, apply=_cache("spread"),
                     hint="lengths spread evenly around the typical one")
PREFIX = NumberField("prefix", "Shared prefix", 0, 10_000_000, True, "tokens", document_input=True,
                     current=lambda s, i: i.cache.prefix, apply=_cache("prefix"),
                     hint="system prompt and tools every request starts with")
HIT_RATE = NumberField("hit_rate", "Hit rate", 0, 100, False, "%", places=0, document_input=True,
                       current=lambda s, i: 100 * i.cache.hit_rate, apply=_cache("hit_rate", 100),
                       hint="requests that find the prefix cached")
LINK = NumberField("link", "Host link achieved", 1, 100, False, "%", places=0, document_input=True,
                   current=lambda s, i: 100 * i.cache.link_fraction, apply=_cache("link_fraction", 100),
                   hint="share of the PCIe rate a copy reaches")


# Document 14: the forecast, the promise and how a load becomes a fleet (calc.specs.stack Traffic,
# Promise, Headroom, Pricing).
def _traffic(name: str):
    return lambda stack, value: replace(stack, traffic=replace(stack.traffic, **{name: value}))


def _headroom(name: str, scale: float = 1):
    return lambda stack, value: replace(stack, headroom=replace(stack.headroom, **{name: value / scale if scale != 1 else value}))


RATE = NumberField("rate", "Peak request rate", 0.01, 100_000, False, "req/s", places=0,
                   current=lambda s: s.traffic.requests_per_s, apply=_traffic("requests_per_s"))
PROMPT_P50 = NumberField("prompt_p50", "Prompt p50", 1, 10_000_000, True, "tokens", current=lambda s: s.traffic.prompt_p50,
                         apply=_traffic("prompt_p50"))
PROMPT_P95 = NumberField("prompt_p95", "Prompt p95", 1, 10_000_000, True, "tokens", current=lambda s: s.traffic.prompt_p95,
                         apply=_traffic("prompt_p95"))
OUTPUT_P50 = NumberField("output_p50", "Output p50", 1, 1_000_000, True, "tokens", current=lambda s: s.traffic.output_p50,
                         apply=_traffic("output_p50"))
TTFT = NumberField("ttft", "TTFT promise, p95", 1, 600_000, False, "ms", places=0,
                   current=lambda s: 1000 * s.promise.ttft_p95_s,
                   apply=lambda s, v: replace(s, promise=replace(s.promise, ttft_p95_s=v / 1000)))
ITL = NumberField("itl", "ITL promise, p95", 1, 10_000, False, "ms", places=0,
                  current=lambda s: 1000 * s.promise.itl_p95_s,
                  apply=lambda s, v: replace(s, promise=replace(s.promise, itl_p95_s=v / 1000)))
BUSIEST = NumberField("target", "Busiest planned", 5, 100, False, "%", places=0, current=lambda s: 100 * s.headroom.target,
                     apply=_headroom("target", 100), hint="headroom: cache and card time at peak")
SPARES = NumberField("spares", "Spare replicas", 0, 1_000, True, "", current=lambda s: s.headroom.spares,
                     apply=_headroom("spares"), hint="1 is N+1")
AVERAGE_LOAD = NumberField("average_load", "Average load", 1, 100, False, "% of peak", places=0,
                           current=lambda s: 100 * s.headroom.average_load, apply=_headroom("average_load", 100),
                           hint="over a month: spreads the bill")
PRICE = NumberField("price", "Price", 0.01, 1_000, False, "$/GPU-hour", places=2, current=lambda s: s.price.gpu_hour_usd,
                    apply=lambda s, v: replace(s, price=replace(s.price, gpu_hour_usd=v)))


# Document 11: the model spread over GPUs (calc.specs.stack.Parallel).
PARALLEL_MODELS = {**CATALOGUE, "deepseek-v3": ATTENTION_MODELS["deepseek-v3"]}


def _parallel(name: str, scale: float = 1):
    def apply(stack: Stack, value: float) -> Stack:
        return replace(stack, parallel=replace(stack.parallel, **{name: value / scale if scale != 1 else value}))
    return apply


def _parallel_limit(stack: Stack, tokens: int) -> Stack:
    """The context limit (calc.calculators checks it against the sharded model's positions); a typical
    conversation longer than the limit is cut to it, so the paged count stays within the limit."""
    return replace(stack, context_limit=tokens, typical_conversation=min(stack.typical_conversation, tokens))


# The reference stack's own model is the 8B; document 11 shards Stack.parallel.model. Choosing one
# sets both, so what the calculator says it computed for (its inputs line, a chart's note) is the model split.
PARALLEL_MODEL = ChoiceField("model", "Model", {k: m.name for k, m in PARALLEL_MODELS.items()},
                             current=lambda s: _key(PARALLEL_MODELS, s.parallel.model),
                             apply=lambda s, key: replace(s, model=PARALLEL_MODELS[key],
                                                          parallel=replace(s.parallel, model=PARALLEL_MODELS[key])))
TENSOR = NumberField("tensor", "Tensor parallel", 1, 8, True, "GPUs", current=lambda s: s.parallel.tensor,
                     apply=_parallel("tensor"), hint="--tensor-parallel-size")
PIPELINE = NumberField("pipeline", "Pipeline", 1, 8, True, "stages", current=lambda s: s.parallel.pipeline,
                       apply=_parallel("pipeline"), hint="--pipeline-parallel-size")
PARALLEL_LIMIT = replace(CONTEXT_LIMIT, apply=_parallel_limit)
PARALLEL_BATCH = NumberField("batch", "Batch", 1, 100_000, True, "sequences", optional=True,
                             current=lambda s: s.parallel.batch or 0, apply=_parallel("batch"),
                             hint="empty: every user the cache admits at the limit")
ALL_REDUCE_TIMING = ChoiceField("all_reduce", "All-reduces priced",
                                {"measured": "as vLLM's were measured on the card", "sketch": "as the sketch below"},
                                current=lambda s: s.parallel.all_reduce,
                                apply=lambda s, key: replace(s, parallel=replace(s.parallel, all_reduce=key)),
                                hint="the sketch: fixed cost + a ring's traffic ÷ the link achieved; cards with no "
                                     "measured table always use it")
RING = NumberField("ring", "Link achieved", 1, 100, False, "%", places=0,
                   current=lambda s: 100 * s.parallel.link_fraction, apply=_parallel("link_fraction", 100),
                   hint="share of the one-way link rate an all-reduce reaches")
ALL_REDUCE_LATENCY = NumberField("latency", "All-reduce fixed cost", 0, 10_000, False, "µs", places=1,
                                 current=lambda s: s.parallel.latency_s * 1e6, apply=_parallel("latency_s", 1e6),
                                 hint="per all-reduce, however small")


# Document 12: a vLLM launch line, read by calc.engine.launch on the card chosen before it.
def _launch(stack: Stack, text: str) -> Stack:
    from .engine.launch import read
    return read(text, stack)


COMMAND = TextField("command", "Launch line", 4_000, current=lambda s: s.serving.command, apply=_launch,
                    hint="vllm serve MODEL --flag value …; line breaks after a backslash are fine")


def _log(stack: Stack, text: str) -> Stack:
    from .engine.logs import read
    read(text)  # a log calc cannot take is refused here, on the field
    return replace(stack, serving=replace(stack.serving, log=text))


def _default_log(stack: Stack) -> str:
    from .engine.logs import PUBLISHED_PLANNER_8B
    return stack.serving.log or PUBLISHED_PLANNER_8B.text


def _without_colours(text: str) -> str:
    """A terminal's colour codes and carriage returns taken out: what a log pasted from a shell carries."""
    if "\x1b" not in text and "\r" not in text:
        return text
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r(?!\n)", "", text).replace("\r\n", "\n")


STARTUP_LOG = TextField("log", "Start-up log", 5_000_000, current=_default_log, apply=_log, rows=10,
                        clean=_without_colours,
                        hint=("vLLM's output from its first line to the end of start-up (0.33.0 prints its CUDA-graph "
                              "estimate after 'GPU KV cache size'); any release, DEBUG or INFO"))


def _log_card_key(stack: Stack) -> str:
    from .engine.logs import LOG_CARDS
    return next(key for key, card in LOG_CARDS.items() if card == stack.card)


def _on_log_card(stack: Stack, key: str) -> Stack:
    from .engine.logs import LOG_CARDS
    return replace(stack, card=LOG_CARDS[key])


def _log_card_names() -> dict[str, str]:
    from .engine.logs import LOG_CARDS
    return {key: card.name for key, card in LOG_CARDS.items()}


LOG_CARD = ChoiceField("card", "Card the log ran on", _log_card_names(), current=_log_card_key, apply=_on_log_card)

def vector_fields(name: str, labels: tuple[str, ...], minimum: float, maximum: float, places: int,
                  read: Callable[[DocumentInputs], tuple[float, ...]],
                  write: Callable[[DocumentInputs, tuple[float, ...]], DocumentInputs],
                  unit: str = "", hint: str = "") -> tuple[NumberField, ...]:
    """A fixed-length vector a document's inputs hold, typed as one number field per element
    (`name_0`, `name_1`, …): each reads its own element and, applied, replaces only that element."""
    def element(index: int, label: str) -> NumberField:
        def apply(inputs: DocumentInputs, value: float) -> DocumentInputs:
            values = list(read(inputs))
            values[index] = value
            return write(inputs, tuple(values))
        return NumberField(f"{name}_{index}", label, minimum, maximum, False, unit, places=places, hint=hint,
                           document_input=True, current=lambda s, i: read(i)[index], apply=apply)
    return tuple(element(i, label) for i, label in enumerate(labels))


# Document 13: the sampling explorer's logits and parameters, and speculative decoding's assumptions.
def _sampling(name: str):
    def apply(inputs: DocumentInputs, value: float) -> DocumentInputs:
        return replace(inputs, sampling=replace(inputs.sampling, **{name: value}))
    return apply


def _top_p(inputs: DocumentInputs, value: float) -> DocumentInputs:
    if value == 0:
        raise ValueError("Top-p must be above 0: it keeps the smallest set of tokens whose probabilities "
                         "reach p, and 1 keeps them all")
    return _sampling("top_p")(inputs, value)


def _candidates() -> tuple[str, ...]:
    from .engine.sampling import CANDIDATES
    return CANDIDATES


LOGITS = vector_fields("logit", tuple(f"Logit of “{c}”" for c in _candidates()), -100, 100, 1,
                       read=lambda i: i.sampling.logits,
                       write=lambda i, v: replace(i, sampling=replace(i.sampling, logits=v)))
TEMPERATURE = NumberField("temperature", "Temperature", 0, 100, False, "", places=2, most_places=6, document_input=True,
                          current=lambda s, i: i.sampling.temperature, apply=_sampling("temperature"),
                          hint="logits ÷ T; 0 is greedy")
TOP_K = NumberField("top_k", "Top-k", 0, 100_000, True, "tokens", document_input=True,
                    current=lambda s, i: i.sampling.top_k, apply=_sampling("top_k"), hint="0: off")
TOP_P = NumberField("top_p", "Top-p", 0, 1, False, "", places=2, most_places=6, document_input=True,
                    current=lambda s, i: i.sampling.top_p, apply=_top_p, hint="above 0, at most 1; 1: off")
MIN_P = NumberField("min_p", "Min-p", 0, 1, False, "", places=2, most_places=6, document_input=True,
                    current=lambda s, i: i.sampling.min_p, apply=_sampling("min_p"),
                    hint="share of the top token's probability; 0: off")
SEED = NumberField("seed", "Seed", 0, 2 ** 32 - 1, True, "", document_input=True,
                   current=lambda s, i: i.sampling.seed, apply=_sampling("seed"), hint="picks the uniform draw")


def _speculation(name: str):
    def apply(inputs: DocumentInputs, value: Any) -> DocumentInputs:
        return replace(inputs, speculation=replace(inputs.speculation, **{name: value}))
    return apply


def _drafters() -> dict[str, str]:
    from .engine.speculative import DRAFTERS
    return {key: drafter.name for key, drafter in DRAFTERS.items()}


ACCEPTANCE = NumberField("acceptance", "Acceptance rate α", 0, 1, False, "", places=2, most_places=6, document_input=True,
                         current=lambda s, i: i.speculation.acceptance, apply=_speculation("acceptance"),
                         hint="chance a drafted token is accepted; not vLLM's logged rate")
DRAFTED = NumberField("drafted", "Drafted tokens γ", 1, 16, True, "tokens", document_input=True,
                      current=lambda s, i: i.speculation.drafted, apply=_speculation("drafted"),
                      hint="per verification pass")
DRAFTER = ChoiceField("drafter", "Drafter", _drafters(), document_input=True, current=lambda s, i: i.speculation.drafter,
                      apply=_speculation("drafter"))
SPEC_BATCH = NumberField("spec_batch", "Batch", 1, 4096, True, "sequences", document_input=True,
                         current=lambda s, i: i.speculation.batch, apply=_speculation("batch"),
                         hint="sequences decoding together")
TARGET = ChoiceField("model", "Target model",
                     {k: CATALOGUE[k].name for k in ("llama-3.1-8b", "llama-3.1-70b")},  # the 405B fits no one card
                     current=lambda s: _key(CATALOGUE, s.model), apply=lambda s, key: replace(s, model=CATALOGUE[key]),
                     hint="Llama 3.1: the drafters share its tokenizer")


# Document 15: the traffic, the promise, the price (calc.specs.stack.Traffic, Promise, Pricing, Serving)
# and the simulated stream (calc.specs.inputs.Stream).
def _default_batched_tokens(stack: Stack) -> int:
    return stack.engine.batch_defaults(stack.card)[0]


OUTPUT_P95 = NumberField("output_p95", "Output p95", 1, 1_000_000, True, "tokens", current=lambda s: s.traffic.output_long,
                         apply=_traffic("output_long"))
STREAM_SEED = NumberField("seed", "Seed", 0, 1_000_000_000, True, "", document_input=True,
                          current=lambda s, i: i.stream.seed, apply=lambda i, v: replace(i, stream=replace(i.stream, seed=v)),
                          hint="the same seed draws the same requests")
STEP_TOKENS = NumberField("step_tokens", "Token budget per step", 16, 1_000_000, True, "tokens",
                          current=lambda s: s.serving.max_num_batched_tokens or _default_batched_tokens(s),
                          apply=lambda s, v: replace(s, serving=replace(s.serving, max_num_batched_tokens=v)),
                          hint="--max-num-batched-tokens: the largest prefill chunk")
