"""A calculator: fields in, every figure its page shows out, as the page shows it.

A calculator is a declaration (calc.calculators): its fields, the checks that span fields, and
the charts and bars it redraws. This module runs any of them. The browser runs it under Pyodide
and the build under CPython, so the numbers a page prints before Python starts and the numbers it
prints after are one computation. Inputs arrive as the strings a form holds; anything wrong comes
back as a message per field, never as an exception, a NaN or an infinity.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping

from .facts import Facts, facts
from .fields import CUSTOM, PASTED, Field, InputError, applied, parse_config
from .specs.models import Model
from .core.present import BadFilter, UnknownFact, figure, resolve
from .core.provenance import Provenance
from .specs.inputs import REFERENCE_INPUTS, DocumentInputs
from .specs.stack import REFERENCE, Stack
from .core.units import Result

Check = Callable[[Mapping[str, Any]], dict[str, str]]


def in_a_sentence(label: str) -> str:
    """A field's label lowercased to sit inside a line of words, its acronyms kept (TTFT, ITL, KV)."""
    return " ".join(word if sum(c.isupper() for c in word) > 1 else word.lower() for word in label.split(" "))


@dataclass(frozen=True)
class Calculator:
    """One calculator: its fields in order (each applied in turn to the reference stack or, for a
    document input, the reference inputs), the checks across them, and what besides references it
    answers: bars and chart curves."""

    name: str
    label: str
    fields: tuple[Field, ...]
    checks: tuple[Check, ...] = ()
    curves: Mapping[str, Callable[[Facts], list[dict]]] = field(default_factory=dict)
    bars: Callable[[Facts], list[float]] | None = None
    results: str = ""
    # What this calculator cannot show for a model calc can otherwise read: a pasted config it
    # would get wrong is refused by name rather than drawn wrong ("" when all is well).
    model_check: Callable[[Model], str] | None = None

    @property
    def takes_config(self) -> bool:
        return any(f.name == "model" and CUSTOM in getattr(f, "choices", {}) for f in self.fields)

    @property
    def defaults(self) -> dict[str, str]:
        return {f.name: f.default(REFERENCE, REFERENCE_INPUTS) for f in self.fields}

    def stack(self, values: Mapping[str, Any], config_text: Any = None) -> tuple[Stack, DocumentInputs, dict[str, str]]:
        """The stack and the documents' inputs the form's values describe, and notes on how they were
        read; every field at fault is reported at once."""
        parsed: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for f in self.fields:
            try:
                parsed[f.name] = f.parse(values.get(f.name, f.default(REFERENCE, REFERENCE_INPUTS)))
            except ValueError as err:
                errors[f.name] = str(err)
        notes: dict[str, str] = {}
        model = None
        if parsed.get("model") == CUSTOM:
            try:
                model = parse_config(config_text)
                refusal = self.model_check(model) if self.model_check else ""
                if refusal:
                    raise InputError({"config": refusal})
                if model.counted:
                    notes["config"] = f"Counted: {model.counted}."
            except InputError as err:
                errors.update(err.errors)
        checked = {**parsed, PASTED: model} if model is not None else parsed
        for check in self.checks:
            errors.update({k: v for k, v in check(checked).items() if k not in errors})
        if errors:
            raise InputError(errors)
        stack = REFERENCE if model is None else replace(REFERENCE, model=model)
        inputs = REFERENCE_INPUTS
        for f in self.fields:
            if parsed[f.name] is None or (f.name == "model" and model is not None):
                continue
            try:
                stack, inputs = applied(f, stack, inputs, parsed[f.name])
            except ValueError as err:
                errors[f.name] = str(err)
        if errors:
            raise InputError(errors)
        return stack, inputs, notes

    def summary(self, values: Mapping[str, Any], stack: Stack) -> str:
        """The inputs in words, for print: what the figures on paper were computed for."""
        parts = []
        for f in self.fields:
            if f.name == "model":
                parts.append(stack.model.name)
                continue
            try:
                shown = f.shown(f.parse(values.get(f.name, f.default(REFERENCE, REFERENCE_INPUTS))))
            except ValueError:
                continue
            if shown:
                parts.append(f"{in_a_sentence(f.label)} {shown}")
        return " · ".join(parts)

    def run(self, values: Mapping[str, Any], config_text: Any = None, paths: list[str] | tuple[str, ...] = (),
            charts: list[str] | tuple[str, ...] = (), bars: bool = False, explain: list[str] | tuple[str, ...] = ()) -> dict:
        """Everything the page asks of this calculator: figures by reference, bars, chart curves; or,
        when a popover opens on a figure it recomputed, what `explain`'s figures were made of."""
        try:
            stack, inputs, notes = self.stack(values, config_text)
        except InputError as err:
            return {"ok": False, "errors": err.errors}
        namespace = facts(stack, inputs)
        if explain:
            return {"ok": True, "facts": explained(namespace, [str(path).partition("|")[0] for path in explain])}
        refs = {}
        for ref in paths:
            try:
                refs[ref] = list(figure(namespace, ref))
            except (UnknownFact, BadFilter, TypeError):
                refs[ref] = ["—", ""]
        answer: dict[str, Any] = {
            "ok": True,
            "refs": refs,
            "notes": {"config": notes.get("config", "")},
            "inputs": self.summary(values, stack),
            "curves": {name: self.curves[name](namespace) for name in charts if name in self.curves},
        }
        if bars and self.bars:
            answer["bars"] = self.bars(namespace)
        return answer


def _fields_near(shown: list[tuple[str, Any]], depth: int = 2) -> Iterator[tuple[str, Result]]:
    """The results held in the fields of the objects the shown figures belong to (the ladder's
    accounting, say), by path: so an input that is one of them is named as the page names it.
    Fields only, never properties, which would compute."""
    def walk(prefix: str, value: Any, left: int) -> Iterator[tuple[str, Result]]:
        if isinstance(value, Result):
            yield prefix, value
        elif left and dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                yield from walk(f"{prefix}.{f.name}", getattr(value, f.name), left - 1)

    values = dict(shown)
    for parent in dict.fromkeys(path.rsplit(".", 1)[0] for path, _ in shown if "." in path):
        if (owner := values.get(parent)) is not None:
            yield from walk(parent, owner, depth)


def explained(namespace: Facts, paths: list[str]) -> dict[str, dict[str, Any]]:
    """What each shown figure's popover says on the reader's stack: its arithmetic and, walked to the
    end, what it was made of. Only the shown figures are looked up (walking every fact would cost a
    recompute many times over), so an input no figure on screen shows is named by what it is."""
    shown: list[tuple[str, Any]] = []
    for path in dict.fromkeys(p for path in paths for p in (path.rsplit(".", 1)[0], path) if p):
        try:
            shown.append((path, resolve(namespace, path)))
        except (UnknownFact, ArithmeticError, ValueError, TypeError):
            continue
    stack, values = namespace.stack, dict(shown)
    provenance = Provenance(shown + list(_fields_near(shown)), namespace,
                            owners={"stack": stack, "stack.model": stack.model, "stack.card": stack.card})
    found: dict[str, dict[str, Any]] = {}
    for path in provenance.closure(p for p in dict.fromkeys(paths) if isinstance(values.get(p), Result)):
        found[path] = {"inputs": [], **provenance.entry(path)}
    return found

