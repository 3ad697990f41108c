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

:class:`EpisodeRecord` declares the fields every record carries and their
types; :func:`write_record` and :func:`read_record` validate a record with it.
:func:`read_record` refuses a record of another schema version, a truncated
file or a malformed record with one line naming the file and the problem;
:func:`read_records` keeps going past bad files and returns them with their
reasons. Records are read and written as plain dicts (the JSON as it is);
``EpisodeRecord.model_validate(record)`` gives typed access.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from homeloop.core.errors import HomeLoopError
from homeloop.core.folder_lock import folder_lock, holder_line
from homeloop.core.ids import safe_id
from homeloop.core.io import write_text

#: Version of the record format; a reader refuses any other.
SCHEMA_VERSION = "homeloop.episode/1"

#: How an episode can end (docs/episodes.md). Transport and protocol errors are not the model's failure.
Ending = Literal["stop", "budget", "horizon", "request_limit", "malformed_limit", "incomplete_reply",
                 "agent_error", "transport_error", "protocol_error", "render_error"]
ENDINGS: tuple[str, ...] = get_args(Ending)

#: Endings that say nothing of the agent (the model was not reached, the endpoint's answer was not the
#: API's, a capture could not be drawn): left out of every score, and run again on resume (docs/scores.md).
UNSCORED_ENDINGS = frozenset({"transport_error", "protocol_error", "render_error"})



class EpisodeRecord(BaseModel):
    """The fields every episode record carries, with their types; the rest (trace, events, route,
    final state, tokens, cost, model calls ...) are optional and kept as they are (docs/scores.md)."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True, populate_by_name=True)

    schema_version: str = Field(alias="schema")
    episode_id: str
    world: dict[str, Any]
    task: dict[str, Any]
    agent: dict[str, Any]
    calls: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    passed: bool
    units_spent: int
    budget: int
    ended_by: Ending


#: The lock a run holds on its run folder while it writes there (docs/episodes.md).
RUN_LOCK = ".run.lock"


class RecordError(ValueError):
    """A record that cannot be read: not JSON, another schema version, or missing fields."""


def episode_id(home: str, task: str, robot: str, seed: int, flags: str = "") -> str:
    """The record's stable name: the same episode always gets the same id (resume relies on it).
    Each part is a safe id (:func:`homeloop.core.ids.safe_id`), and so is the whole."""
    parts = [safe_id(home, "home"), safe_id(task, "task"), safe_id(robot, "robot"), f"s{int(seed)}"]
    return safe_id("__".join(parts + ([safe_id(flags, "flags")] if flags else [])), "episode")


def record_path(run_dir: Path, eid: str) -> Path:
    return Path(run_dir) / "episodes" / f"{safe_id(eid, 'episode')}.json"


def home_copy_path(run_dir: Path, home: str) -> Path:
    """Where a run folder keeps its copy of a home file: ``homes/<home>.json``."""
    return Path(run_dir) / "homes" / f"{safe_id(home, 'home')}.json"


def capture_image_name(eid: str, capture: str) -> str:
    """A captured image's file, relative to ``episodes/``: ``<episode id>/<capture id>.png``."""
    return f"{safe_id(eid, 'episode')}/{safe_id(capture, 'capture')}.png"


def write_record(run_dir: Path, record: dict[str, Any]) -> Path:
    """Write ``record`` atomically under ``run_dir/episodes/``; returns its path."""
    record = {"schema": SCHEMA_VERSION, **record}
    validate_record(record, f"record {record.get('episode_id', '?')}")
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
    validate_record(data, str(path))
    record: dict[str, Any] = data
    return record


def validate_record(data: Any, where: str) -> EpisodeRecord:
    """``data`` as an :class:`EpisodeRecord`, or :class:`RecordError`: one line that starts with
    ``where`` and names the problem (another schema version, the missing fields, a field of the
    wrong type)."""
    if not isinstance(data, dict):
        raise RecordError(f"{where}: not a record (a JSON object)")
    found = data.get("schema")
    if found != SCHEMA_VERSION:
        raise RecordError(f"{where}: schema {found if found is not None else 'missing'}, this HomeLoop reads "
                          f"{SCHEMA_VERSION}; rerun the episodes with this version")
    try:
        return EpisodeRecord.model_validate(data)
    except ValidationError as exc:
        raise RecordError(f"{where}: {_problems(exc)}") from None


def _problems(exc: ValidationError) -> str:
    """The validation errors of a record on one line: the missing fields, then each wrong one."""
    missing = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "missing"]
    wrong = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors() if e["type"] != "missing"]
    parts = ([f"lacks {', '.join(missing)}"] if missing else []) + wrong
    return "; ".join(parts).replace("\n", " ")


class RunFolderBusy(HomeLoopError):
    """Another run writes to the run folder."""


@contextlib.contextmanager
def run_lock(run_dir: Path, warn: Callable[[str], None] = print) -> Iterator[Path]:
    """Hold the lock of run folder ``run_dir`` (which must exist) for the block, or raise
    :class:`RunFolderBusy` naming the run that holds it (:mod:`homeloop.core.folder_lock`)."""
    run_dir = Path(run_dir).resolve()

    def busy(holder: dict[str, Any] | None) -> RunFolderBusy:
        pid = holder.get("pid") if holder else "…"
        return RunFolderBusy(f"run folder {run_dir} is in use by another run ({holder_line(holder)}); "
                             f"wait for it to finish, or stop it (kill {pid}) and rerun")

    with folder_lock(run_dir / RUN_LOCK, "run", busy, warn) as path:
        yield path


@dataclass
class RecordSet:
    """The readable records of some run folders, and each unreadable file with why."""

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
