"""The import graph of `server/gradguard` between its packages, its cycles, and adapter arrows.

    python scripts/import_graph.py [--modules] [--check]

Reads every module's imports with `ast` (nothing is imported). Prints one line per package (or,
with `--modules`, per module): what it imports from the rest of gradguard. Then the import
cycles (between packages, and between modules, where an import made only for type checking, under
`if TYPE_CHECKING:`, runs nothing and is left out: the interpreter's parts name each other's types
in `analysis/shared.py`'s `Parts`) and every arrow from one adapter (`cli`, `lsp`: the front ends)
into the other; `verify/`, the runtime verifier, is a service both use. With `--check`, exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "server" / "gradguard"
ADAPTERS = frozenset({"cli", "lsp"})  # the front ends; verify/ is the runtime verifier both use


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, typing: bool = True) -> set[str]:
    """The gradguard modules `path` imports (at any depth of its code; without `typing`, those
    imported under `if TYPE_CHECKING:` aside)."""
    found: set[str] = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set() if typing else {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                                    and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
                                    for statement in block.body for n in ast.walk(statement)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("gradguard"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.startswith("gradguard"):
                found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                             for alias in node.names)
    return found


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def package_of(module: str) -> str:
    """`gradguard.lsp.server` -> `lsp`; the top-level modules stand for themselves."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def graph(by_module: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        source = module if by_module else package_of(module)
        targets = edges.setdefault(source, set())
        for target in imports_of(path, typing=not by_module):
            target = target if by_module else package_of(target)
            if target != source:
                targets.add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def adapter_arrows(package_edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Arrows from one adapter package into another."""
    return sorted((source, target) for source, targets in package_edges.items() for target in targets
                  if source in ADAPTERS and target in ADAPTERS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="one node per module, not per package")
    parser.add_argument("--check", action="store_true", help="exit 1 on a cycle or an adapter arrow")
    args = parser.parse_args()
    edges = graph(args.modules)
    for source in sorted(edges):
        print(f"{source} -> {', '.join(sorted(edges[source])) or '(nothing)'}")
    package_edges = graph(False)
    found_cycles = cycles(package_edges) + cycles(graph(True))
    arrows = adapter_arrows(package_edges)
    print(f"\nimport cycles (between packages, then between modules): {len(found_cycles)}")
    for cycle in found_cycles:
        print("  " + " <-> ".join(cycle))
    print(f"arrows from one adapter into another: {len(arrows)}")
    for source, target in arrows:
        print(f"  {source} -> {target}")
    return 1 if args.check and (found_cycles or arrows) else 0


if __name__ == "__main__":
    sys.exit(main())
