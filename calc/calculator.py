"""The on-page calculator: the reader's inputs in, every requested figure out, as the page shows it.

The browser runs this module under Pyodide and the build runs it under CPython, so the numbers a
page prints before Python starts and the numbers it prints after are one computation. Inputs
arrive as the strings a form holds; anything wrong comes back as a message per field, never as
an exception, a NaN or an infinity.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from .cards import CARDS
from .echo import excerpt, hidden_characters
from .facts import facts
from .models import CATALOGUE, ConfigError, Model
from .precision import KV_PRECISIONS, PRECISIONS
from .present import BadFilter, UnknownFact, figure
from .roofline import cache_share_curves
from .stack import REFERENCE, Stack
from .units import GiB

CUSTOM = "custom"
LARGEST_CONFIG = 200_000
DEEPEST_CONFIG = 32
LONGEST_CONFIG_NUMBER = 30
LONGEST_NUMBER = 40
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?")
_JSON_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")


class InputError(ValueError):
    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class NumberField:
    name: str
    label: str
    minimum: float
    maximum: float
    whole: bool
    unit: str = ""

    def parse(self, raw: Any) -> float:
        text = str(raw if raw is not None else "").strip()
        if not text:
            raise ValueError(f"{self.label} is empty: enter a number")
        if len(text) > LONGEST_NUMBER:
            raise ValueError(f"{self.label} is too long to be a number: “{excerpt(text, 24)}”")
        hidden = hidden_characters(text)
        if hidden:
            raise ValueError(f"{self.label} holds a character that does not print ({', '.join(hidden[:3])}): "
                             f"“{excerpt(text, 24)}”; type the number again")
        if "," in text:
            text = self._without_thousands_commas(text)
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{self.label} must be a number, not “{excerpt(text, 24)}”") from None
        if not math.isfinite(value):
            raise ValueError(f"{self.label} must be a finite number")
        if self.whole and value != int(value):
            raise ValueError(f"{self.label} must be a whole number of {self.unit or 'units'}")
        if value < self.minimum or value > self.maximum:
            unit = f" {self.unit}" if self.unit else ""
            raise ValueError(f"{self.label} must be between {_number(self.minimum)} and {_number(self.maximum)}{unit}")
        return int(value) if self.whole else value + 0.0  # + 0.0 turns −0 into 0

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


@dataclass(frozen=True)
class ChoiceField:
    name: str
    label: str
    choices: dict[str, str]
    unit: str = ""

    def parse(self, raw: Any) -> str:
        if not isinstance(raw, str) or raw not in self.choices:
            raise ValueError(f"{self.label}: choose one of {', '.join(self.choices.values())}")
        return raw


FIELDS = (
    ChoiceField("model", "Model", {**{k: m.name for k, m in CATALOGUE.items()}, CUSTOM: "Your config.json"}),
    ChoiceField("card", "Card", {k: c.name for k, c in CARDS.items()}),
    ChoiceField("weights", "Weight precision", {k: f"{p.name} · {p.bits:g} bits" for k, p in PRECISIONS.items()}),
    ChoiceField("kv", "KV cache precision", {k: f"{p.name} · {p.bits:g} bits" for k, p in KV_PRECISIONS.items()}),
    NumberField("context_limit", "Context limit", 1, 10_000_000, True, "tokens"),
    NumberField("utilisation", "Utilisation", 0.05, 1.0, False),
    NumberField("activations", "Activation reserve", 0, 1_000, False, "GiB"),
    NumberField("conversation", "Typical conversation", 1, 10_000_000, True, "tokens"),
)


def _key(table: Mapping[str, Any], value: Any) -> str:
    return next(k for k, v in table.items() if v == value)


DEFAULTS: dict[str, str] = {
    "model": _key(CATALOGUE, REFERENCE.model),
    "card": _key(CARDS, REFERENCE.card),
    "weights": REFERENCE.weight_precision.name,
    "kv": REFERENCE.kv_precision.name,
    "context_limit": str(REFERENCE.context_limit),
    "utilisation": f"{REFERENCE.gpu_memory_utilization:.2f}",
    "activations": f"{REFERENCE.activation_reserve_bytes / GiB:.2f}",
    "conversation": str(REFERENCE.typical_conversation),
}


def parse_config(text: Any) -> Model:
    """A pasted config.json, checked field by field; errors name the field (or the JSON position)."""
    if not isinstance(text, str) or not text.strip():
        raise InputError({"config": "paste the contents of a config.json first"})
    if len(text) > LARGEST_CONFIG:
        raise InputError({"config": f"that is over {LARGEST_CONFIG:,} characters; a config.json is a few thousand"})
    depth = nesting_depth(text)
    if depth > DEEPEST_CONFIG:
        raise InputError({"config": f"it nests {depth:,} levels deep; a config.json nests a few, "
                                    f"and calc reads none deeper than {DEEPEST_CONFIG}"})
    try:
        config = json.loads(text, parse_constant=_reject_constant, parse_int=_config_integer)
    except json.JSONDecodeError as err:
        raise InputError({"config": f"not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}"}) from None
    except ValueError as err:
        raise InputError({"config": str(err)}) from None
    try:
        return Model.from_config(config, source="config.json pasted by the reader")
    except ConfigError as err:
        raise InputError({"config": f"{err.field}: {err.problem}"}) from None


def nesting_depth(text: str) -> int:
    """How deep the brackets of a JSON text nest, outside its strings: read before parsing, so a
    hostile paste cannot exhaust the parser's stack."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRINGS.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def stack_from(values: Mapping[str, Any], config_text: Any = None) -> Stack:
    """The stack the inputs describe; every field at fault is reported at once."""
    parsed: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for field in FIELDS:
        try:
            parsed[field.name] = field.parse(values.get(field.name, DEFAULTS[field.name]))
        except ValueError as err:
            errors[field.name] = str(err)
    model = None
    if parsed.get("model") == CUSTOM:
        try:
            model = parse_config(config_text)
        except InputError as err:
            errors.update(err.errors)
    elif "model" in parsed:
        model = CATALOGUE[parsed["model"]]
    if "conversation" in parsed and "context_limit" in parsed and parsed["conversation"] > parsed["context_limit"]:
        errors["conversation"] = (f"Typical conversation is longer than the context limit "
                                  f"({parsed['context_limit']:,} tokens)")
    if errors:
        raise InputError(errors)
    return replace(
        REFERENCE,
        model=model,
        card=CARDS[parsed["card"]],
        weight_precision=PRECISIONS[parsed["weights"]],
        kv_precision=KV_PRECISIONS[parsed["kv"]],
        context_limit=parsed["context_limit"],
        gpu_memory_utilization=parsed["utilisation"],
        activation_reserve_bytes=parsed["activations"] * GiB,
        typical_conversation=parsed["conversation"],
    )


def run(values: Mapping[str, Any], config_text: Any = None, paths: list[str] | tuple[str, ...] = ()) -> dict:
    """Everything a calculator shows for these inputs: figures by reference, bars, chart curves."""
    try:
        stack = stack_from(values, config_text)
    except InputError as err:
        return {"ok": False, "errors": err.errors}
    namespace = facts(stack)
    refs = {}
    for ref in paths:
        try:
            refs[ref] = list(figure(namespace, ref))
        except (UnknownFact, BadFilter, TypeError):
            refs[ref] = ["—", ""]
    levers = namespace["levers"]
    return {
        "ok": True,
        "refs": refs,
        "bars": levers.bar_widths,
        "curves": {"cache-share": cache_share_curves(stack.model, stack.weight_precision, stack.kv_precision)},
        "model": stack.model.name,
        "notes": {"config": f"Counted: {stack.model.counted}." if stack.model.counted else ""},
    }


def run_json(request: str) -> str:
    """The browser's entry point: a JSON request in, a JSON answer out."""
    try:
        asked = json.loads(request)
        answer = run(asked.get("values", {}), asked.get("config"), asked.get("paths", []))
    except Exception as err:  # the page must get an answer, whatever went wrong
        answer = {"ok": False, "errors": {"calculator": f"could not compute: {type(err).__name__}: {err}"}}
    return json.dumps(answer, ensure_ascii=False, allow_nan=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not valid JSON: {name} is not a number JSON allows")


def _config_integer(digits: str) -> int:
    if len(digits.lstrip("-")) > LONGEST_CONFIG_NUMBER:
        raise ValueError(f"a number in it is {len(digits.lstrip('-')):,} digits long; no config field needs "
                         f"more than {LONGEST_CONFIG_NUMBER}")
    return int(digits)


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"
