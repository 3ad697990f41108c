"""Stage results cached by inputs and code.

Each stage of a build records, under ``<build>/.stages/<stage>.json``, the key
it ran with (a hash of its parameters, the hashes of its input files and the
hash of the project's code and catalog) and the hashes of the files it wrote.
A rerun skips a stage whose key is unchanged and whose outputs are still on
disk unaltered, so an unchanged rerun is nearly free, and a build killed in
the middle resumes at the stage it was in. The record is written last and
atomically: a stage that did not finish has no record and runs again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from homeloop.io import sha256_file, write_json

ROOT = Path(__file__).resolve().parent.parent
#: What the code hash covers: every package of the project and the catalog data.
CODE_DIRS = ("homeloop", "pipeline", "audits", "flows", "catalog")
RECORDS = ".stages"


@lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 over the project's source and catalog files (paths and bytes)."""
    h = hashlib.sha256()
    for folder in CODE_DIRS:
        base = ROOT / folder
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix in {".py", ".yaml", ".yml", ".csv", ".json"} and "__pycache__" not in path.parts:
                h.update(path.relative_to(ROOT).as_posix().encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def stage_key(stage: str, params: dict[str, Any], inputs: Iterable[Path]) -> str:
    payload = {
        "stage": stage,
        "params": params,
        "inputs": {Path(p).name: sha256_file(p) for p in sorted(inputs, key=str)},
        "code": code_hash(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@dataclass
class StageCache:
    out: Path

    def _record_path(self, stage: str) -> Path:
        return self.out / RECORDS / f"{stage}.json"

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
