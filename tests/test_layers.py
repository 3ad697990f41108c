"""The layer contract of pyproject.toml, checked with import-linter.

The library (homeloop without its cli, flows, pipeline and audits) must not
import those; audits must not import pipeline or flows; pipeline must not
import flows (docs/README.md). The folders pipeline/, audits/, flows/ and
catalog/ are installed inside the homeloop namespace, so lint-imports is run
on a copy of the sources laid out as they are installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def installed_layout(target: Path) -> Path:
    """Copy every package's .py files to where the install puts them (pyproject package-dir)."""
    setuptools = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["setuptools"]
    for package, folder in setuptools["package-dir"].items():
        source = ROOT / folder
        for path in sorted(source.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            dest = target.joinpath(*package.split("."), path.relative_to(source))
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
    return target


def lint_imports(layout: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports with the project's contract over ``layout``, from inside it.

    The working directory and PYTHONPATH are the copy, so the checkout's own
    homeloop/ (which lacks pipeline/, audits/, flows/) is not the one analysed.
    """
    env = {**os.environ, "PYTHONPATH": str(layout)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache", str(PYPROJECT)],
        cwd=layout, env=env, capture_output=True, text=True, check=False,
    )


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    return installed_layout(tmp_path / "site")


def test_layout_mirrors_the_install(layout: Path) -> None:
    # The copy has the subpackages the contract names, where the install puts them.
    for module in ("homeloop/cli.py", "homeloop/pipeline/stages.py", "homeloop/audits/registry.py",
                   "homeloop/flows/build.py", "homeloop/catalog_data/__init__.py", "homeloop/plan.py"):
        assert (layout / module).is_file(), module
    assert not (layout / "pipeline").exists()


def test_the_project_keeps_its_layers(layout: Path) -> None:
    result = lint_imports(layout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def _inject(module: Path, line: str) -> None:
    """Append ``line`` to ``module``, creating it (and its package) when it is new."""
    if not module.parent.exists():
        module.parent.mkdir(parents=True)
        (module.parent / "__init__.py").write_text('"""A new package."""\n', encoding="utf-8")
    text = module.read_text(encoding="utf-8") if module.exists() else '"""A new module."""\n'
    module.write_text(text + f"\n{line}\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("module", "bad_import", "importer", "imported"),
    [
        # the library, old modules and new ones, imports none of the upper layers
        ("homeloop/home.py", "from homeloop.pipeline import stages", "homeloop.home", "homeloop.pipeline"),
        ("homeloop/bench/tasks.py", "import homeloop.flows.build", "homeloop.bench.tasks", "homeloop.flows"),
        ("homeloop/plan.py", "from homeloop.audits import registry", "homeloop.plan", "homeloop.audits"),
        ("homeloop/catalog.py", "from homeloop import cli", "homeloop.catalog", "homeloop.cli"),
        ("homeloop/newly_added.py", "import homeloop.pipeline.select", "homeloop.newly_added", "homeloop.pipeline"),
        ("homeloop/bench/agents/replay.py", "from homeloop.flows import settings", "homeloop.bench.agents.replay",
         "homeloop.flows"),
        # audits import no pipeline or flows; pipeline imports no flows
        ("homeloop/audits/no_kitchen.py", "import homeloop.pipeline.features", "homeloop.audits.no_kitchen",
         "homeloop.pipeline"),
        ("homeloop/audits/registry.py", "from homeloop.flows import settings", "homeloop.audits.registry",
         "homeloop.flows"),
        ("homeloop/pipeline/select.py", "from homeloop.flows import settings", "homeloop.pipeline.select",
         "homeloop.flows"),
    ],
)
def test_a_wrong_way_import_breaks_the_contract(layout: Path, module: str, bad_import: str,
                                                importer: str, imported: str) -> None:
    _inject(layout / module, bad_import)
    result = lint_imports(layout)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"is not allowed to import {imported}:" in result.stdout
    # The report names the injected import and its line (an upward import may
    # break both contracts, through the modules that import the importer).
    line_no = len((layout / module).read_text(encoding="utf-8").splitlines())
    assert re.search(rf"{re.escape(importer)} -> {re.escape(imported)}[\w.]* \(l\.{line_no}\)", result.stdout)
