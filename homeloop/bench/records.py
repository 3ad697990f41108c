"""Episode records: one self-contained JSON file per episode (docs/scores.md).

A record holds everything needed to understand and rescore an episode
without the simulator: the resolved world (home id and hash, scenario, task,
robot, withheld services, flags, seed), the source revision, the agent and
model, every call with its arguments, result, error, units and simulated
times, every event, the check results with their witnesses, whether it
passed, the units spent and the budget, how it ended, and tokens and cost
where the agent reports them. Images live beside it as files, referenced by
name. Records are written atomically (temporary name, then rename), so a run
interrupted at any moment leaves only complete records.

:func:`read_record` refuses a record of another schema version or a
truncated file with one line naming the file; :func:`read_records` keeps
going past bad files and returns them with their reasons.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from homeloop.io import write_text

#: Version of the record format; a reader refuses any other.
SCHEMA_VERSION = "homeloop.episode/1"

#: How an episode can end (docs/episodes.md). Transport errors are not the model's failure.
ENDINGS = ("stop", "budget", "horizon", "request_limit", "malformed_limit", "incomplete_reply",
           "agent_error", "transport_error")

#: Fields every record must carry (the rest are optional).
REQUIRED = ("schema", "episode_id", "world", "task", "agent", "calls", "checks", "passed", "units_spent",
            "budget", "ended_by")


class RecordError(ValueError):
    """A record that cannot be read: not JSON, another schema version, or missing fields."""


def episode_id(home: str, task: str, robot: str, seed: int, flags: str = "") -> str:
    """The record's stable name: the same episode always gets the same id (resume relies on it)."""
    parts = [home, task, robot, f"s{seed}"] + ([flags] if flags else [])
    return "__".join(p.replace("/", "_") for p in parts)


def record_path(run_dir: Path, eid: str) -> Path:
    return Path(run_dir) / "episodes" / f"{eid}.json"


def write_record(run_dir: Path, record: dict[str, Any]) -> Path:
    """Write ``record`` atomically under ``run_dir/episodes/``; returns its path."""
    record = {"schema": SCHEMA_VERSION, **record}
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise RecordError(f"record {record.get('episode_id', '?')} lacks {', '.join(missing)}")
    path = record_path(run_dir, record["episode_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(record, sort_keys=True, separators=(",", ":"), default=_plain) + "\n")
    return path


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"not JSON-able: {type(value).__name__}")


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """One record, or :class:`RecordError` naming the file and what is wrong."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not a complete JSON record (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: not a record (a JSON object)")
    if data.get("schema") != SCHEMA_VERSION:
        raise RecordError(f"{path}: record format {data.get('schema')!r} is not {SCHEMA_VERSION!r}; "
                          "rerun the episodes with this version")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise RecordError(f"{path}: record lacks {', '.join(missing)}")
    return data


@dataclass
class RecordSet:
    records: list[dict[str, Any]]
    rejected: list[tuple[Path, str]]


def record_files(run_dirs: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Every record file under the run folders (``episodes/*.json``), sorted."""
    files: list[Path] = []
    for d in run_dirs:
        d = Path(d)
        folder = d / "episodes" if (d / "episodes").is_dir() else d
        files.extend(sorted(folder.glob("*.json")))
    return files


def iter_records(run_dirs: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[Path, dict[str, Any] | None, str]]:
    """Each record file of the run folders in turn: (path, record, "") or (path, None, why not).

    Reading one at a time keeps memory flat when scoring many thousands of records."""
    for f in record_files(run_dirs):
        try:
            yield f, read_record(f), ""
        except RecordError as exc:
            yield f, None, str(exc)


def read_records(run_dirs: Iterable[str | os.PathLike[str]]) -> RecordSet:
    """Every readable record of the run folders; unreadable ones are returned with their reasons."""
    records, rejected = [], []
    for path, record, why in iter_records(run_dirs):
        if record is None:
            rejected.append((path, why))
        else:
            records.append(record)
    return RecordSet(records, rejected)
