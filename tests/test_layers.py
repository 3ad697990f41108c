"""The floors of homeloop and its import graph (docs/code.md, "Floors").

lint-imports checks the layer contract of pyproject.toml (cli > flows > pipeline
> audits | harness > bench > sim > core: a floor imports only the floors below it, and every
subpackage stands on one), and the import graph grimp builds must hold no cycle
anywhere. Both run on the checkout, and on a copy of homeloop/ into which a
wrong-way import is written, which they must catch. Each runs in its own
process with PYTHONPATH on the tree it analyses, so the copy, not the
installed checkout, is the ``homeloop`` found.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

#: Prints the strongly connected groups of more than one module of homeloop's import graph, as JSON.
CYCLES = """
import json, grimp, networkx
graph = grimp.build_graph("homeloop", cache_dir=None)
edges = networkx.DiGraph()
edges.add_edges_from((m, t) for m in graph.modules for t in graph.find_modules_directly_imported_by(m))
print(json.dumps(sorted(sorted(g) for g in networkx.strongly_connected_components(edges) if len(g) > 1)))
"""


def _in(tree: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` run from ``tree`` with ``tree`` first on the import path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports with the project's contract over the homeloop/ of ``tree``."""
    return _in(tree, [str(LINT_IMPORTS), "--no-logo", "--no-cache", str(PYPROJECT)])


def import_cycles(tree: Path) -> list[list[str]]:
    """The import cycles among the modules of the homeloop/ of ``tree``: each a sorted group of modules."""
    result = _in(tree, [sys.executable, "-c", CYCLES])
    assert result.returncode == 0, result.stderr
    groups: list[list[str]] = json.loads(result.stdout)
    return groups


def _not_source(folder: str, names: list[str]) -> set[str]:
    """What a copy of the sources leaves out: data files and bytecode."""
    return {n for n in names if n == "__pycache__" or not (n.endswith(".py") or (Path(folder) / n).is_dir())}


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sources of homeloop/, copied once for this module's tests (each restores what it changes)."""
    tree = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "homeloop", tree / "homeloop", ignore=_not_source)
    return tree


@pytest.fixture
def inject(copy: Path) -> Iterator[Callable[[str, str], int]]:
    """Append a line to a module of the copy (creating the module if new); returns its line number.

    Every module written is put back as it was when the test ends."""
    before: dict[Path, str | None] = {}

    def add(module: str, line: str) -> int:
        path = copy / module
        before.setdefault(path, path.read_text(encoding="utf-8") if path.exists() else None)
        text = path.read_text(encoding="utf-8") if path.exists() else '"""A module of the test."""\n'
        text += f"\n{line}\n"
        path.write_text(text, encoding="utf-8")
        return len(text.splitlines())

    yield add
    for path, text in before.items():
        if text is None:
            path.unlink()
        else:
            path.write_text(text, encoding="utf-8")


def test_the_checkout_keeps_its_floors() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_the_checkout_has_no_import_cycle() -> None:
    cycles = import_cycles(ROOT)
    assert not cycles, "modules that import each other, directly or round a cycle:\n" + "\n".join(
        ", ".join(group) for group in cycles)


@pytest.mark.parametrize(
    ("module", "line", "importer", "imported"),
    [
        ("homeloop/sim/wake.py", "from homeloop.bench import records", "homeloop.sim.wake", "homeloop.bench"),
        ("homeloop/core/home.py", "import homeloop.sim.world", "homeloop.core.home", "homeloop.sim"),
        ("homeloop/pipeline/select.py", "from homeloop.flows import settings", "homeloop.pipeline.select",
         "homeloop.flows"),
        ("homeloop/bench/scoring.py", "import homeloop.pipeline.applicability", "homeloop.bench.scoring",
         "homeloop.pipeline"),
        ("homeloop/audits/no_kitchen.py", "import homeloop.pipeline.features", "homeloop.audits.no_kitchen",
         "homeloop.pipeline"),
        ("homeloop/core/plan.py", "from homeloop import cli", "homeloop.core.plan", "homeloop.cli"),
    ],
)
def test_a_wrong_way_import_breaks_the_floors(copy: Path, inject: Callable[[str, str], int], module: str,
                                              line: str, importer: str, imported: str) -> None:
    line_no = inject(module, line)
    result = lint_imports(copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"is not allowed to import {imported}:" in result.stdout
    # The report names the injected import and its line (an upward import may also break
    # the floors through the modules that import the importer).
    assert re.search(rf"{re.escape(importer)} -> {re.escape(imported)}[\w.]* \(l\.{line_no}\)", result.stdout)


def test_a_module_on_no_floor_breaks_the_floors(copy: Path, inject: Callable[[str, str], int]) -> None:
    inject("homeloop/newly_added.py", "import homeloop.core.plan")
    result = lint_imports(copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"not listed as layers:\s+- homeloop\.newly_added\n", result.stdout), result.stdout


def test_an_import_cycle_is_found(copy: Path, inject: Callable[[str, str], int]) -> None:
    # homeloop.core.home imports homeloop.core.io; the way back closes a cycle inside one floor.
    inject("homeloop/core/io.py", "import homeloop.core.home")
    assert any({"homeloop.core.home", "homeloop.core.io"} <= set(group) for group in import_cycles(copy))
