"""Episode records read back from Inspect logs, for ``homeloop bench score`` (docs/agents.md, "Inspect").

Each sample of ``inspect eval homeloop/benchmark`` is scored by
:func:`homeloop.harness.inspect_task.episode_checks`, whose score metadata holds the episode's
whole record (:data:`~homeloop.harness.inspect_task.RECORD_KEY`). :func:`iter_log_records` yields
them as :func:`homeloop.bench.records.iter_records` yields the records of run folders, ``(path,
record, "")`` or ``(path, None, why not)``, so both are scored by the same code. A log is an
``.eval`` or ``.json`` file Inspect wrote, or a folder of them; a sample without a record (it
ended in an error, or the log is of another task) is named with why. Samples are read one at a
time, without their messages and events; Inspect is imported only to read a log.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

from homeloop.bench.records import RecordError, validate_record

#: The names Inspect gives its logs: an ``.eval`` file, or a ``.json`` file named from its start time.
LOG_SUFFIX = ".eval"
JSON_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")

#: What a sample's record is read without (the conversation is not needed to score it).
SKIPPED_FIELDS = frozenset({"messages", "events", "attachments"})


def is_log(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names Inspect logs rather than a run folder: an ``.eval`` or ``.json`` file, or a
    folder with no ``episodes/`` that holds Inspect's logs."""
    path = Path(path)
    if path.is_file():
        return path.suffix in (LOG_SUFFIX, ".json")
    return path.is_dir() and not (path / "episodes").is_dir() and bool(log_files(path))


def log_files(path: str | os.PathLike[str]) -> list[Path]:
    """The log files ``path`` names: itself, or those in the folder, sorted."""
    path = Path(path)
    if path.is_file():
        return [path]
    return sorted(p for p in path.iterdir() if p.is_file() and (p.suffix == LOG_SUFFIX or JSON_LOG_NAME.match(p.name)))


def iter_log_records(logs: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[Path, dict[str, Any] | None, str]]:
    """Each sample's record in the logs in turn (see the module docstring)."""
    from inspect_ai.log import read_eval_log_samples

    from homeloop.harness.inspect_task import RECORD_KEY

    for log in [f for path in logs for f in log_files(path)]:
        try:
            samples = read_eval_log_samples(log, all_samples_required=False, exclude_fields=set(SKIPPED_FIELDS))
            for sample in samples:
                where = f"{log}: sample {sample.id} (epoch {sample.epoch})"
                found = [s.metadata[RECORD_KEY] for s in (sample.scores or {}).values()
                         if s.metadata and RECORD_KEY in s.metadata]
                if not found:
                    why = f"it ended in an error: {sample.error.message}" if sample.error else "not a HomeLoop sample"
                    yield log, None, f"{where}: no episode record ({why.splitlines()[0]})"
                    continue
                try:
                    validate_record(found[0], where)
                    yield log, found[0], ""
                except RecordError as exc:
                    yield log, None, str(exc)
        except Exception as exc:  # Inspect's reader raises many kinds for a file that is no log
            yield log, None, f"{log}: not an Inspect log that can be read ({type(exc).__name__}: {exc})".splitlines()[0]
