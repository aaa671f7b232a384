"""Where each number comes from, read off the computation: a result's inputs are the results its
arithmetic used (calc.core.arith records them), found here by identity among the namespace's facts.

An input that is itself a fact is linked by its path; a given read off a config or a datasheet
(`arith.field`) by the path of the field it was read from; an intermediate the namespace never
names gets a path of its own under the result that used it (`ladder.kv_budget~0`), so the chain
still walks back through it. The same code runs in the build, for every number a page shows, and
in the reader's browser after a recompute, for the numbers on screen.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Iterable, Mapping

from .present import resolve, show
from .units import Result

INTERMEDIATE = "~"


class Provenance:
    """Every fact of a namespace, and which facts each result was made of."""

    def __init__(self, facts: Iterable[tuple[str, Any]], namespace: Mapping[str, Any] | None = None,
                 owners: Mapping[str, Any] | None = None):
        self.facts: dict[str, Any] = dict(facts)
        self.namespace = namespace
        # Objects whose fields a given may be read off, by path: the reference stack's config and
        # datasheet, when the facts are only some of the namespace's.
        self._owners = {id(owner): path for path, owner in (owners or {}).items()}
        self._path_of: dict[int, str] = {}
        self._path_of_equal: dict[Result, list[str]] = {}
        for path, value in self.facts.items():
            if isinstance(value, Result):
                self._path_of.setdefault(id(value), path)
                self._path_of_equal.setdefault(value, []).append(path)
        self._by_field: dict[str, list[str]] = {}
        for path in self.facts:
            self._by_field.setdefault(path.rsplit(".", 1)[-1], []).append(path)
        self._inputs: dict[str, list[str]] = {}

    def value(self, path: str) -> Any:
        return self.facts[path]

    def recorded(self, path: str) -> bool:
        value = self.facts.get(path)
        return isinstance(value, Result) and (value.inputs is not None or value.origin is not None)

    def inputs(self, path: str) -> list[str]:
        """The facts a result was made of, in the order its arithmetic uses them."""
        if path not in self._inputs:
            value = self.facts.get(path)
            self._inputs[path] = self._recorded_inputs(path, value)
        return self._inputs[path]

    def _recorded_inputs(self, path: str, value: Any) -> list[str]:
        found: list[str] = []
        if isinstance(value, Result):
            if value.origin is not None and (read := self._field_path(value)) and read != path:
                found.append(read)
            for i, used in enumerate(value.inputs or ()):
                linked = self._link(used, f"{path}{INTERMEDIATE}{i}")
                if linked != path and linked not in found:
                    found.append(linked)
        return found

    def _link(self, used: Result, fresh: str) -> str:
        if id(used) in self._path_of:
            return self._path_of[id(used)]
        if used.origin is not None and (read := self._field_path(used)):
            return read
        # A result computed twice (a property rebuilds it on each reading) is the same fact if it
        # is equal in every shown part and says what it is; of several, the one nearest the result.
        if used.formula and (same := self._path_of_equal.get(used)):
            return max(same, key=lambda path: _shared(path, fresh))
        self.facts[fresh] = used
        self._path_of[id(used)] = fresh
        return fresh

    def _field_path(self, used: Result) -> str | None:
        """The fact path of the config or datasheet field a given was read off: the field's name
        under an owner that is, by identity, the object it was read from."""
        owner, name = used.origin
        if id(owner) in self._owners:
            path = f"{self._owners[id(owner)]}.{name}"
            self.facts.setdefault(path, getattr(owner, name))
            return path
        for path in sorted(self._by_field.get(name, ()), key=len):
            parent = path.rsplit(".", 1)[0]
            if self.namespace is not None and "." in path:
                try:
                    # equal, not only the same object: the build's facts may come back from its cache
                    if resolve(self.namespace, parent) == owner:
                        return path
                except (KeyError, AttributeError, ArithmeticError, ValueError):
                    continue
        return None

    def closure(self, paths: Iterable[str]) -> list[str]:
        """The paths and every fact they rest on, walked to the end."""
        seen: dict[str, None] = {}
        queue = deque(p for p in paths if p in self.facts)
        while queue:
            path = queue.popleft()
            if path in seen:
                continue
            seen[path] = None
            queue.extend(p for p in self.inputs(path) if p not in seen)
        return list(seen)

    def entry(self, path: str, value: Any = None) -> dict[str, Any]:
        """What a popover shows for one fact: its text, formula, arithmetic, inputs and source. A
        `value` deeper than the namespace's walk reaches (a published log's rung) is shown as read."""
        if path in self.facts:
            value = self.facts[path]
        entry: dict[str, Any] = {"text": show(value)}
        if isinstance(value, Result):
            entry.update(formula=value.formula, worked=value.worked if value.worked != str(value) else "")
        if INTERMEDIATE in path and isinstance(value, Result):
            entry["name"] = value.formula
        if inputs := (self.inputs(path) if path in self.facts else self._recorded_inputs(path, value)):
            entry["inputs"] = inputs
        if self.namespace is not None and INTERMEDIATE not in path and (source := source_of(path, self.namespace)):
            entry["source"] = source
        return entry


def _shared(a: str, b: str) -> int:
    """How many leading names two paths share."""
    count = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        count += 1
    return count


def source_of(path: str, namespace: Mapping[str, Any]) -> str:
    """The published source behind a fact: the model's config or the card's datasheet, where the
    fact is one of their fields."""
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            owner = namespace
            for part in parts[:i]:
                owner = owner[part] if isinstance(owner, Mapping) else getattr(owner, part)
        except (KeyError, AttributeError):
            continue
        field = parts[i]
        for name in (f"{field.split('_')[0]}_source", "source"):  # card.cuda_capacity → card.cuda_source
            source = getattr(owner, name, None)
            if isinstance(source, str) and source:
                return source
    return ""
