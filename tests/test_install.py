"""HomeLoop as a user installs it: a wheel, not the checkout.

The project is built into a wheel from a copy of the checkout (so the build
leaves nothing in the working tree), the wheel is installed into a bare
folder, and the installed copy is imported and runs a small build from
another working directory. Anything that finds its files relative to the
repository instead of the package fails here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from build_fixtures import REPO, subprocess_env

pytestmark = pytest.mark.slow

#: Folders of the checkout a wheel build never needs.
NOT_SOURCES = (".git", ".venv", "outputs", "build", "dist", ".prefect", ".stages", "__pycache__",
               "*.egg-info", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", ".gl")
#: The folders the distribution installs inside the homeloop namespace, never at the top level.
NAMESPACED = ("pipeline", "audits", "flows", "catalog")
#: Files of the source folders that the wheel must carry: code and data.
SOURCE_SUFFIXES = (".py", ".yaml", ".csv", ".json")
#: The small build run with the installed copy.
BUILD = ("--plans", "40", "--sites", "10", "--homes", "5", "--seed", "0", "--workers", "1")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of the project, built from a copy of the checkout."""
    source = tmp_path_factory.mktemp("source") / "homeloop"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    wheels = tmp_path_factory.mktemp("wheels")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "--wheel-dir", str(wheels), str(source)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Warning" not in result.stdout + result.stderr, result.stdout[-3000:] + result.stderr[-3000:]
    (built,) = wheels.glob("homeloop-*.whl")
    return built


def test_the_editable_install_make_runs_builds_without_warnings(tmp_path: Path) -> None:
    """`make` installs the checkout editable; setuptools' build of that editable wheel says nothing
    (no package-data folder taken for a package, no editable-layout notice)."""
    source = tmp_path / "homeloop"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    code = "from setuptools import build_meta; print(build_meta.build_editable(%r))" % str(tmp_path / "out")
    result = subprocess.run([sys.executable, "-W", "default", "-c", code], cwd=source,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Warning" not in result.stdout + result.stderr, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding only the installed distribution (no dependencies: the venv has them)."""
    target = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
         "--target", str(target), str(wheel)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return target


def installed_python(site: Path, code: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**env, "PYTHONPATH": str(site)},
                          capture_output=True, text=True, check=False)


def test_the_wheel_claims_only_the_homeloop_namespace(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top_level = {name.split("/", 1)[0] for name in names}
    assert {t for t in top_level if not t.endswith(".dist-info")} == {"homeloop"}
    assert not top_level & set(NAMESPACED)
    # The namespaced folders and the package data are inside homeloop/.
    for inside in ("homeloop/pipeline/stages.py", "homeloop/audits/registry.py", "homeloop/flows/build.py",
                   "homeloop/catalog/devices.yaml", "homeloop/core/data/house.csv",
                   "homeloop/bench/tasks/handle_smoke_alarm.yaml"):
        assert inside in names, inside
    task_files = {p.name for p in (REPO / "homeloop" / "bench" / "tasks").glob("*.yaml")}
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("homeloop/bench/tasks/")} == task_files


def installed_sources() -> set[str]:
    """Every module and data file of the checkout's package, as the wheel must name it (the folders
    of homeloop/ are its import paths)."""
    return {path.relative_to(REPO).as_posix() for path in (REPO / "homeloop").rglob("*")
            if path.is_file() and path.suffix in SOURCE_SUFFIXES and "__pycache__" not in path.parts}


def test_the_wheel_holds_every_module_and_data_file(wheel: Path) -> None:
    # A subpackage or data folder missing from pyproject's lists would leave an
    # installed copy that fails on import or on reading its data.
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    missing = sorted(installed_sources() - names)
    assert not missing, f"not in the wheel (add them to [tool.setuptools] in pyproject.toml): {missing}"


def test_every_installed_module_imports(installed: Path, tmp_path: Path,
                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    code = (
        "import importlib, json, pkgutil, homeloop\n"
        "failed = {}\n"
        "for m in pkgutil.walk_packages(homeloop.__path__, 'homeloop.'):\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except Exception as exc:\n"
        "        failed[m.name] = f'{type(exc).__name__}: {exc}'\n"
        "print(json.dumps(failed))\n"
    )
    result = installed_python(installed, code, tmp_path, subprocess_env(tmp_path_factory))
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {}


def test_the_installed_copy_is_the_one_imported(installed: Path, tmp_path: Path,
                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    code = (
        "import json, homeloop, homeloop.pipeline.stages, homeloop.audits, homeloop.flows\n"
        "from homeloop.core.catalog import DEFAULT_CATALOG_DIR, load_catalog\n"
        "from homeloop.sim.task import load_tasks\n"
        "from homeloop.core.house import HOUSE_CSV\n"
        "print(json.dumps({'files': [m.__file__ for m in (homeloop, homeloop.pipeline.stages, homeloop.audits,"
        " homeloop.flows)] + [str(DEFAULT_CATALOG_DIR / 'devices.yaml')], 'devices': len(load_catalog().devices),"
        " 'tasks': len(load_tasks()), 'house': str(HOUSE_CSV)}))\n"
    )
    result = installed_python(installed, code, tmp_path, subprocess_env(tmp_path_factory))
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    for path in seen["files"] + [seen["house"]]:
        assert Path(path).resolve().is_relative_to(installed.resolve()), path
    assert seen["tasks"] == len(list((REPO / "homeloop" / "bench" / "tasks").glob("*.yaml")))
    assert seen["devices"] > 0


def test_the_installed_copy_builds_homes(installed: Path, tmp_path: Path,
                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    out = tmp_path / "out" / "x"
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "homeloop.cli", "build", *BUILD, "--out", str(out)],
        cwd=workdir, env={**subprocess_env(tmp_path_factory), "PYTHONPATH": str(installed)},
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    manifest = json.loads((out / "manifest.json").read_text())
    homes = sorted(p.parent.name for p in (out / "homes").glob("*/home.json"))
    # The five homes asked for, plus the house, each with its home file and USD.
    assert len(homes) == 6, homes
    assert "house" in homes
    for home in homes:
        assert (out / "homes" / home / "home.usdc").is_file(), home
    assert manifest["parameters"]["homes"] == 5
    # Nothing was written in the working directory, nor inside the installed package.
    assert sorted(p.name for p in workdir.iterdir()) == []
    assert installed_files(installed) == recorded_files(installed)


def recorded_files(site: Path) -> set[str]:
    """The package files the install recorded (the wheel's RECORD), bytecode aside."""
    (record,) = site.glob("homeloop-*.dist-info/RECORD")
    paths = (line.split(",", 1)[0] for line in record.read_text().splitlines())
    return {p for p in paths if p.startswith("homeloop/") and "__pycache__" not in p}


def installed_files(site: Path) -> set[str]:
    """The files now in the installed package, bytecode aside."""
    return {p.relative_to(site).as_posix() for p in (site / "homeloop").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}
