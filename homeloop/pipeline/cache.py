"""Stage results cached by inputs, parameters and code.

Each stage of a build records, under ``<build>/.stages/<stage>.json``, the key
it ran with and the hashes of the files it wrote. The key is a hash of the
stage's parameters, of every input file — named by its path relative to the
build folder (``homes/<id>/home.json``, not ``home.json``) and hashed by its
bytes — and of the code the stage runs (:func:`stage_code_hash`: the project
modules it imports, transitively) and the project's data files, so editing
the command line or the report reruns only what depends on it. A rerun skips a stage whose key
is unchanged and whose outputs are still on disk unaltered, so an unchanged
rerun is nearly free, and a build killed in the middle resumes at the stage it
was in. More homes, another seed, an edited, added or deleted input, or a
tampered output all run the stage again. The record is written last and
atomically: a stage that did not finish has no record and runs again. A
stage that runs again deletes the files its previous record lists that it no
longer writes, where they are still as written (another seed's audit pictures:
:mod:`homeloop.pipeline.build_folder`). See docs/pipeline.md.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import inspect
import json
import os
import sys
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable

from homeloop.core.io import sha256_file, write_json

#: What the code hash covers: the project's packages, wherever they are installed
#: (a source checkout, an editable install or a wheel in site-packages).
CODE_PACKAGES = ("homeloop",)
CODE_SUFFIXES = frozenset({".py", ".yaml", ".yml", ".csv", ".json"})
RECORDS = ".stages"


def package_dirs(names: Iterable[str] = CODE_PACKAGES) -> dict[str, list[Path]]:
    """The folders each package is imported from (its ``__path__``), found without
    importing the package itself (importing ``homeloop.flows`` configures Prefect)."""
    found = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(f"package {name} is not importable; reinstall homeloop")
        found[name] = [Path(p).resolve() for p in spec.submodule_search_locations]
    return found


@lru_cache(maxsize=4)
def code_files(names: tuple[str, ...] = CODE_PACKAGES) -> dict[str, Path]:
    """Source and data files of the packages, by a name that does not depend on the
    install layout: ``homeloop/pipeline/stages.py`` in a checkout, an editable install and a
    wheel alike."""
    dirs = package_dirs(names)
    files: dict[str, Path] = {}
    owner: dict[Path, str] = {}
    # Deepest package first, so a subpackage's files are named after it, not its parent.
    for name in sorted(dirs, key=lambda n: (-n.count("."), n)):
        for base in dirs[name]:
            for path in sorted(base.rglob("*")):
                if (path.suffix in CODE_SUFFIXES and path.is_file() and "__pycache__" not in path.parts
                        and path.resolve() not in owner):
                    owner[path.resolve()] = name
                    files[f"{name}/{path.relative_to(base).as_posix()}"] = path
    return dict(sorted(files.items()))


@lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 over the project's source and catalog files (names and bytes)."""
    h = hashlib.sha256()
    for name, path in code_files().items():
        h.update(name.encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


# --- the code one stage runs ------------------------------------------------------------------


@lru_cache(maxsize=1)
def _module_files() -> dict[str, str]:
    """Module name -> code-file name (of :func:`code_files`) for every Python module of the project."""
    modules = {}
    for name in code_files():
        package, _, rel = name.partition("/")
        if not rel.endswith(".py"):
            continue
        parts = [package] + rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = name
    return modules


def _imports(tree: ast.AST, modules: dict[str, str]) -> set[str]:
    """Project modules an AST imports anywhere in it (function-level imports included), with the
    packages whose ``__init__`` importing them runs."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in modules)
    return found


@lru_cache(maxsize=None)
def _module_imports(module: str) -> frozenset[str]:
    modules = _module_files()
    return frozenset(_imports(ast.parse(code_files()[modules[module]].read_bytes()), modules))


def module_closure(start: Iterable[str]) -> set[str]:
    """The project modules ``start`` imports, transitively (``start`` included)."""
    seen: set[str] = set()
    todo = [m for m in start if m in _module_files()]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(_module_imports(module) - seen)
    return seen


@lru_cache(maxsize=64)
def _code_hash_of(modules: frozenset[str]) -> str:
    files = code_files()
    module_files = _module_files()
    chosen = {module_files[m] for m in modules}
    # Data files (catalog, task and scenario YAML, the house's CSV) count for every stage: cheap to
    # hash, and a stage that reads one through a library function still reruns when it changes.
    chosen |= {name for name in files if not name.endswith(".py")}
    h = hashlib.sha256()
    for name in sorted(chosen):
        h.update(name.encode() + b"\0")
        h.update(files[name].read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _stage_reach(module: Any, outer: Callable[..., Any]) -> set[str]:
    """Project modules a stage function imports, also through the functions of its own module it
    calls (``run_generate`` imports the generator for the source stage), and its module's top."""
    tree = ast.parse(inspect.getsource(module))
    local = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    modules = _module_files()
    found = _imports(ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))],
                                type_ignores=[]), modules)
    todo, seen = [outer.__name__], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in local:
            continue
        seen.add(name)
        found |= _imports(local[name], modules)
        todo.extend(n.id for n in ast.walk(local[name]) if isinstance(n, ast.Name) and n.id in local)
    return found


def stage_code_hash(function: Callable[..., Any]) -> str:
    """sha256 over the code a stage runs: the module defining the stage (its bytes and the modules it
    imports at its top), the stage's own function (found from ``function``: the stage function or a
    closure defined in it) and the functions of that module it calls, with the modules they import,
    transitively, and the project's data files. Editing a module a stage does not reach (the command
    line, another stage's worker) leaves that stage's key unchanged."""
    module = sys.modules[function.__module__]
    outer = getattr(module, function.__qualname__.split(".<locals>")[0])
    return _code_hash_of(frozenset(module_closure(_stage_reach(module, outer)) | {module.__name__}))


def build_code_hash() -> str:
    """sha256 over the code every stage of a build can reach (the stages module and what it imports,
    transitively, with the data files): a superset of each :func:`stage_code_hash`, so equal values
    mean no stage key changed; the command line and the benchmark runner are not part of it."""
    return _code_hash_of(frozenset(module_closure(["homeloop.pipeline.stages"])))


def input_name(path: Path, root: Path | None) -> str:
    """An input's name in a key: its path relative to the build folder when it lies
    inside it, else its absolute path (a ``--source`` file elsewhere)."""
    resolved = Path(path).resolve()
    if root is not None:
        try:
            return resolved.relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return resolved.as_posix()


class FileDigests:
    """sha256 of files, each file version read once: a build hashes the same home files as one
    stage's outputs, as the inputs of each stage after it and as the manifest's outputs, in the
    build's own process while the workers wait. A version is the file's
    path, device, inode, size and modification time; build outputs are written to a temporary
    name and renamed into place (homeloop.core.io), so a rewritten output is a new inode. For one
    build only: a long-lived memo could miss an edit that keeps all five."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, int, int, int, int], str] = {}

    def __call__(self, path: str | os.PathLike[str]) -> str:
        st = os.stat(path)
        version = (os.fspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        digest = self._known.get(version)
        if digest is None:
            digest = self._known[version] = sha256_file(path)
        return digest


def input_hashes(inputs: Iterable[Path], root: Path | None,
                 digest: Callable[[Path], str] = sha256_file) -> dict[str, str | None]:
    """Name → sha256 of each input; ``None`` for one that does not exist, so that a
    deleted input changes the key instead of failing it."""
    hashes: dict[str, str | None] = {}
    for path in inputs:
        name = input_name(path, root)
        if name in hashes:
            raise ValueError(f"input {name} is listed twice")
        hashes[name] = digest(path) if Path(path).is_file() else None
    return dict(sorted(hashes.items()))


def stage_key(stage: str, params: dict[str, Any], inputs: Iterable[Path], root: Path | None = None,
              code: str | None = None, digest: Callable[[Path], str] = sha256_file) -> str:
    """The hash that decides whether ``stage`` runs again: its parameters, its inputs
    (by path relative to ``root``, the build folder, and by content) and its code
    (``code``: :func:`stage_code_hash`; by default all of the project's code)."""
    payload = {
        "stage": stage,
        "params": params,
        "inputs": input_hashes(inputs, root, digest),
        "code": code or code_hash(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@dataclass
class StageCache:
    out: Path
    #: How files are hashed: once per file version for the life of this cache (one build).
    digest: Callable[[Path], str] = field(default_factory=FileDigests)

    def _record_path(self, stage: str) -> Path:
        return self.out / RECORDS / f"{stage}.json"

    def key(self, stage: str, params: dict[str, Any], inputs: Iterable[Path], code: str | None = None) -> str:
        return stage_key(stage, params, inputs, self.out, code, self.digest)

    def lookup(self, stage: str, key: str) -> dict[str, Any] | None:
        """The stage's recorded result when its key matches and its outputs are intact."""
        path = self._record_path(stage)
        if not path.is_file():
            return None
        try:
            record = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            return None
        if record.get("key") != key:
            return None
        for rel, digest in record.get("outputs", {}).items():
            target = self.out / rel
            if not target.is_file() or self.digest(target) != digest:
                return None
        return record.get("result", {})

    def recorded_outputs(self, stage: str) -> dict[str, str]:
        """The files the stage's record lists (path relative to the build folder → sha256 as
        written); empty when it has no readable record."""
        try:
            outputs = json.loads(self._record_path(stage).read_text()).get("outputs", {})
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            return {}
        return dict(outputs) if isinstance(outputs, dict) else {}

    def store(self, stage: str, key: str, outputs: Iterable[Path], result: dict[str, Any]) -> dict[str, str]:
        """Record the stage's key, result and outputs; return the outputs' hashes."""
        hashes = {}
        for p in sorted(set(outputs), key=str):
            hashes[Path(p).relative_to(self.out).as_posix()] = self.digest(p)
        write_json(self._record_path(stage), {"stage": stage, "key": key, "outputs": hashes, "result": result})
        return hashes
