"""Stage results cached by inputs, parameters and code.

Each stage of a build records, under ``<build>/.stages/<stage>.json``, the key
it ran with and the hashes of the files it wrote. The key is a hash of the
stage's parameters, of every input file — named by its path relative to the
build folder (``homes/<id>/home.json``, not ``home.json``) and hashed by its
bytes — and of the project's code and catalog. A rerun skips a stage whose key
is unchanged and whose outputs are still on disk unaltered, so an unchanged
rerun is nearly free, and a build killed in the middle resumes at the stage it
was in. More homes, another seed, an edited, added or deleted input, or a
tampered output all run the stage again. The record is written last and
atomically: a stage that did not finish has no record and runs again.
See docs/pipeline.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from homeloop.io import sha256_file, write_json

#: What the code hash covers: the project's packages, wherever they are installed
#: (a source checkout, an editable install or a wheel in site-packages).
CODE_PACKAGES = ("homeloop", "homeloop.pipeline", "homeloop.audits", "homeloop.flows", "homeloop.catalog_data")
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


def code_files(names: Iterable[str] = CODE_PACKAGES) -> dict[str, Path]:
    """Source and data files of the packages, by a name that does not depend on the
    install layout: ``homeloop.pipeline/stages.py`` in a checkout (where the package
    lives in ``pipeline/``) and in a wheel (``homeloop/pipeline/``) alike."""
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


def input_hashes(inputs: Iterable[Path], root: Path | None) -> dict[str, str | None]:
    """Name → sha256 of each input; ``None`` for one that does not exist, so that a
    deleted input changes the key instead of failing it."""
    hashes: dict[str, str | None] = {}
    for path in inputs:
        name = input_name(path, root)
        if name in hashes:
            raise ValueError(f"input {name} is listed twice")
        hashes[name] = sha256_file(path) if Path(path).is_file() else None
    return dict(sorted(hashes.items()))


def stage_key(stage: str, params: dict[str, Any], inputs: Iterable[Path], root: Path | None = None) -> str:
    """The hash that decides whether ``stage`` runs again: its parameters, its inputs
    (by path relative to ``root``, the build folder, and by content) and the code."""
    payload = {
        "stage": stage,
        "params": params,
        "inputs": input_hashes(inputs, root),
        "code": code_hash(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@dataclass
class StageCache:
    out: Path

    def _record_path(self, stage: str) -> Path:
        return self.out / RECORDS / f"{stage}.json"

    def key(self, stage: str, params: dict[str, Any], inputs: Iterable[Path]) -> str:
        return stage_key(stage, params, inputs, self.out)

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
            if not target.is_file() or sha256_file(target) != digest:
                return None
        return record.get("result", {})

    def store(self, stage: str, key: str, outputs: Iterable[Path], result: dict[str, Any]) -> None:
        hashes = {}
        for p in sorted(set(outputs), key=str):
            hashes[Path(p).relative_to(self.out).as_posix()] = sha256_file(p)
        write_json(self._record_path(stage), {"stage": stage, "key": key, "outputs": hashes, "result": result})
