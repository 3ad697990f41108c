"""The shape of the code, as a reader meets it: the import graph and the size of its parts.

    .venv/bin/python benchmarks/code_shape.py [--top 8]

Prints: modules and imports of the homeloop package (from grimp, the graph import-linter reads);
the import cycles (groups of modules that reach each other) and their sizes; the largest classes
and functions (lines from their first line to their last); and how many parameters at the seams
(``ctx``, ``ep``, ``episode``, ``world``, ``context``) are typed ``Any``. tests/test_layers.py
and tests/test_code_shape.py hold the rules; this script prints where the code stands.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import grimp
import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "homeloop"
SEAM_ANY = re.compile(r"\b(ctx|ep|episode|world|context)\s*:\s*Any\b")


def import_graph() -> nx.DiGraph:
    graph = grimp.build_graph("homeloop")
    out = nx.DiGraph()
    for module in graph.modules:
        out.add_node(module)
        out.add_edges_from((module, imported) for imported in graph.find_modules_directly_imported_by(module))
    return out


def sizes() -> tuple[list[tuple[int, str]], list[tuple[int, str]], int]:
    """(lines, name) of every class and function, and the count of ``Any`` at the seams."""
    classes: list[tuple[int, str]] = []
    functions: list[tuple[int, str]] = []
    seam_any = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        seam_any += len(SEAM_ANY.findall(text))
        rel = path.relative_to(PACKAGE.parent).as_posix()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                classes.append((node.end_lineno - node.lineno + 1, f"{rel}::{node.name}"))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((node.end_lineno - node.lineno + 1, f"{rel}::{node.name}"))
    return sorted(classes, reverse=True), sorted(functions, reverse=True), seam_any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=8, help="how many of the largest classes and functions")
    top = parser.parse_args().top
    graph = import_graph()
    cycles = sorted((sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1), key=len, reverse=True)
    print(f"modules {graph.number_of_nodes()}, imports {graph.number_of_edges()}")
    print(f"import cycles: {len(cycles)} (sizes {[len(c) for c in cycles]})")
    for cycle in cycles:
        print("  " + ", ".join(cycle))
    classes, functions, seam_any = sizes()
    print("largest classes (lines): " + ", ".join(f"{name} {n}" for n, name in classes[:top]))
    print("largest functions (lines): " + ", ".join(f"{name} {n}" for n, name in functions[:top]))
    print(f"classes over 300 lines: {sum(n > 300 for n, _ in classes)}; functions over 60: "
          f"{sum(n > 60 for n, _ in functions)}")
    print(f"seam parameters typed Any (ctx, ep, episode, world, context): {seam_any}")


if __name__ == "__main__":
    main()
