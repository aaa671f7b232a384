"""calc is layered: each module imports only from its own layer or the layers below it, and no
import, a lazy one inside a function included, closes a cycle."""
from __future__ import annotations

import ast
from pathlib import Path

CALC = Path(__file__).resolve().parent.parent / "calc"
LAYERS = ("core", "specs", "model", "engine", "documents")  # bottom to top; calc's own modules sit above
COMMANDS = {"engine.__main__"}  # a shell command, not a layer: it may use anything


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(CALC.rglob("*.py")):
        parts = path.relative_to(CALC).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every calc module `name` imports, at the top or inside a function."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
            elif node.module and node.module.split(".")[0] == "calc":
                base = []
            else:
                continue
            module = (node.module or "").removeprefix("calc").lstrip(".") if not node.level else node.module or ""
            target = ".".join([*base, *([module] if module else [])])
            found |= {t for t in [target, *(f"{target}.{a.name}".lstrip(".") for a in node.names)] if t in known}
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("calc.") for a in node.names if a.name.removeprefix("calc.") in known}
    return found - {name}


def layer(name: str) -> int:
    top = name.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else len(LAYERS)


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_sits_in_a_layer_or_is_the_registry_above_them():
    loose = [name for name in graph() if "." not in name and name not in ("", *LAYERS, "facts", "calculator", "calculators", "fields")]
    assert loose == [], f"modules outside a layer's package: {loose}"


def test_no_module_imports_from_a_layer_above_its_own():
    upward = [f"{name} → {target}" for name, targets in graph().items() if name not in COMMANDS
              for target in sorted(targets) if layer(target) > layer(name)]
    assert upward == [], "imports that reach up a layer:\n" + "\n".join(upward)


def test_no_import_closes_a_cycle_lazy_ones_included():
    edges = graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                cycles.append(" → ".join(trail[trail.index(target):] + [node, target]) if target in trail
                              else f"{node} → {target}")
            elif target not in state:
                visit(target, trail + [node])
        state[node] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [])
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_the_walk_sees_lazy_imports():
    """A check of the checker: the registry's lazy imports of each document are edges."""
    assert {"documents.planning", "documents.production", "documents.start"} <= graph()["facts"]
