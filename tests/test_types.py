"""The typed seams: mypy --strict holds on the simulator and the benchmark, a wrong type at a seam
fails it, and an episode record is checked against its schema when read."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from homeloop.bench.records import SCHEMA_VERSION, RecordError, read_record, write_record

ROOT = Path(__file__).resolve().parents[1]


def _mypy(*targets: str) -> subprocess.CompletedProcess[str]:
    """mypy as ``make test`` runs it: the project's configuration, its default cache folder."""
    mypy = Path(sys.executable).with_name("mypy")
    command = [str(mypy)] if mypy.exists() else [sys.executable, "-m", "mypy"]
    return subprocess.run([*command, *targets], cwd=ROOT, capture_output=True, text=True)


def test_the_simulator_and_the_benchmark_are_strictly_typed():
    run = _mypy()
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_skill_that_reaches_past_its_context_fails_the_type_check(tmp_path):
    """A skill sees its episode only through :class:`SkillContext`: reaching for the episode
    behind it, or treating agent time as a whole number, is an error mypy names."""
    copy = tmp_path / "clock_copy.py"
    shutil.copy(ROOT / "homeloop" / "sim" / "services" / "clock.py", copy)
    with copy.open("a", encoding="utf-8") as fh:
        fh.write("\n\ndef _behind(ctx: SkillContext) -> object:\n    return ctx.episode\n"
                 "\n\ndef _whole_seconds(ctx: SkillContext) -> int:\n    return ctx.now()\n")
    run = _mypy(str(copy))
    assert run.returncode == 1, run.stdout + run.stderr
    assert '"SkillContext" has no attribute "episode"' in run.stdout, run.stdout
    assert 'Incompatible return value type (got "float", expected "int")' in run.stdout, run.stdout
    assert run.stdout.count(": error:") == 2, run.stdout


# --- the episode record's schema ------------------------------------------------------------------


def _record(**over: object) -> dict[str, object]:
    record: dict[str, object] = {
        "episode_id": "house__handle_smoke_alarm__g1__s0", "world": {"home": "house", "seed": 0},
        "task": {"id": "handle_smoke_alarm"}, "agent": {"name": "scripted"}, "calls": [],
        "checks": [{"id": "stove_off", "passed": True}], "passed": True, "units_spent": 10, "budget": 60,
        "ended_by": "stop", "summary": "switched the stove off"}
    record.update(over)
    return record


def _written(tmp_path: Path, record: dict[str, object]) -> Path:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def test_a_written_record_is_the_dict_given_with_its_schema(tmp_path):
    path = write_record(tmp_path, _record())
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps({"schema": SCHEMA_VERSION, **_record()}, sort_keys=True, separators=(",", ":")) + "\n"
    assert read_record(path) == {"schema": SCHEMA_VERSION, **_record()}


def test_a_record_of_another_schema_version_is_one_line(tmp_path):
    path = _written(tmp_path, {**_record(), "schema": "homeloop.episode/0"})
    with pytest.raises(RecordError) as caught:
        read_record(path)
    assert str(caught.value) == (f"{path}: schema homeloop.episode/0, this HomeLoop reads {SCHEMA_VERSION}; "
                                 "rerun the episodes with this version")


def test_a_record_missing_a_field_names_it(tmp_path):
    record = {"schema": SCHEMA_VERSION, **_record()}
    del record["units_spent"]
    with pytest.raises(RecordError) as caught:
        read_record(_written(tmp_path, record))
    message = str(caught.value)
    assert "\n" not in message and message.endswith(": lacks units_spent"), message


def test_a_record_field_of_the_wrong_type_is_named(tmp_path):
    path = _written(tmp_path, {"schema": SCHEMA_VERSION, **_record(passed="yes", ended_by="gave_up")})
    with pytest.raises(RecordError) as caught:
        read_record(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: passed: "), message
    assert "ended_by: " in message, message


def test_a_malformed_record_is_not_written(tmp_path):
    with pytest.raises(RecordError, match="lacks budget"):
        write_record(tmp_path, {k: v for k, v in _record().items() if k != "budget"})
    assert not (tmp_path / "episodes").exists() or not any((tmp_path / "episodes").iterdir())
