"""The package's structure (docs/development.md): imports point one way, no cycles, and a
subpackage offers others only what its ``__init__.py`` names.

Read from the source with `ast` (nothing is imported), every relative import counted,
those inside functions too: a lazy import that closes a cycle is still a cycle.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "perfmodel"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(module: str):
    """``(target module, name)`` of every relative ``from … import name`` in `module`."""
    path = MODULES[module]
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            stem = base[: len(base) - (node.level - 1)]
            target = ".".join(stem + ([node.module] if node.module else []))
            for alias in node.names:
                yield target, alias.name


def _graph() -> dict[str, set[str]]:
    graph = {}
    for module in MODULES:
        for target, name in _imports(module):
            full = f"{target}.{name}"
            end = full if full in MODULES else target
            if end != module and end in MODULES:
                graph.setdefault(module, set()).add(end)
    return graph


def _subpackage(module: str) -> str | None:
    """``_fitting`` for ``perfmodel._fitting.linear``; None for flat modules."""
    parts = module.split(".")
    if len(parts) >= 2 and (len(parts) >= 3 or MODULES[module].name == "__init__.py"):
        return parts[1]
    return None


def test_the_package_is_found():
    assert {"perfmodel", "perfmodel._fitting", "perfmodel._cli.app"} <= set(MODULES)


def test_no_import_cycle():
    graph, state, cycles = _graph(), {}, []

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, "\n".join(cycles)


def test_subpackages_use_each_other_through_their_init_only():
    """Outside the top-level ``perfmodel/__init__.py`` (the public face, which loads
    each name from its module lazily), a module of another subpackage is reached
    only through that subpackage's ``__init__``, and never for a private name."""
    problems = []
    for module in MODULES:
        if module == "perfmodel":
            continue
        for target, name in _imports(module):
            theirs = _subpackage(target) if target in MODULES else None
            if theirs is None or theirs == _subpackage(module):
                continue
            if target.count(".") >= 2:
                problems.append(f"{module} reaches into {target} for {name}")
            elif name.startswith("_") and f"{target}.{name}" not in MODULES:
                problems.append(f"{module} takes the private {target}.{name}")
    assert not problems, "\n".join(problems)
