"""Every option of every command, fed hostile values: one line and exit code 2, or a result.

The cases are built from the command line's own parameter list (the Typer app as Click
commands, the ``bench`` commands too), so an option added later is covered without a new
test. Each option gets values by its type: negatives, zero, huge numbers, nan, empty text,
markup (``[/]``), ``../``, a NUL, a folder where a file is expected and a file where a
folder is. Each command starts from arguments that stop it before real work (:data:`BASES`),
so only the option under test changes what it does.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest
from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from homeloop.cli import app
from homeloop.cli.common import every_command

TEXT = ["", "[/]", "../", "\x00", "-1", "9" * 40]
NUMBERS = {int: ["-1", "0", str(2**63), "[/]"], float: ["-1", "0", "1e308", "nan", "-inf", "[/]"]}


@dataclass
class Places:
    """Files and folders the arguments name; the working folder is ``cwd`` (``../`` is inside the test's folder)."""

    cwd: Path
    folder: Path  # an empty folder
    file: Path  # a regular file
    under_file: Path  # a path through that file
    csv: Path  # a one-plan source
    plan: str
    ingested: Path
    build: Path  # applicability tables
    house: Path  # a folder holding the house's home.json


def hostile_paths(p: Places) -> list[str]:
    return ["", "[/]", "../", "\x00", str(p.folder), str(p.file), str(p.under_file)]


#: Per command, arguments that end it quickly with one line (or a small result), by parameter name.
BASES: dict[tuple[str, ...], Callable[[Places], dict[str, str]]] = {
    ("generate",): lambda p: {"out": str(p.under_file / "x.csv"), "plans": "1", "sites": "1"},
    ("ingest",): lambda p: {"source": str(p.csv), "out": str(p.under_file / "ingest")},
    ("show",): lambda p: {"plan": p.plan, "from_dir": str(p.ingested), "out": str(p.under_file / "x.png")},
    ("audit",): lambda p: {"source": str(p.csv), "out": str(p.under_file / "audit")},
    # An unknown robot stops a build before Prefect starts (and sites above plans, when that option is under test).
    ("build",): lambda p: {"verify_robots": "no_such_robot", "out": str(p.folder / "build")},
    ("applicability",): lambda p: {"from_dir": str(p.build)},
    ("verify",): lambda p: {"build_dir": str(p.folder)},
    ("sim",): lambda p: {"home_dir": str(p.house), "task": "handle_smoke_alarm", "robot": "no_such_robot"},
    ("render",): lambda p: {"home_dir": str(p.house), "camera": "no_such_camera", "out": str(p.folder / "r.png")},
    # An unknown robot stops an MCP episode before it is set up or served.
    ("mcp",): lambda p: {"home": str(p.house), "task": "handle_smoke_alarm", "robot": "no_such_robot",
                         "out": str(p.folder / "mcp")},
    ("bench", "run"): lambda p: {"agent": "scripted", "homes": str(p.folder), "out": str(p.folder / "run")},
    ("bench", "score"): lambda p: {"run_dirs": str(p.folder)},
    ("bench", "generate-control"): lambda p: {"homes": str(p.folder), "out": str(p.folder / "control.jsonl")},
    ("bench", "replay-latency"): lambda p: {"run_dir": str(p.folder), "out": str(p.folder / "replayed")},
    ("bench", "view"): lambda p: {"run_dir": str(p.folder)},
}

#: Options that only act beside another, and what stops the command instead when the base's own stop is under test.
COMPANIONS: dict[tuple[tuple[str, ...], str], dict[str, str]] = {
    (("build",), "verify_robots"): {"plans": "1", "sites": "2"},
    (("applicability",), "runs"): {"sql": "select 1"},
    (("applicability",), "timeout"): {"sql": "select 1"},
    (("applicability",), "memory_limit"): {"sql": "select 1"},
    (("applicability",), "out"): {"sql": "select 1"},
    (("render",), "at"): {"task": "handle_smoke_alarm"},
    (("bench", "run"), "replies"): {"agent": "replay"},
    (("bench", "run"), "images_in"): {"agent": "replay"},
}


def commands():
    return {path: command for path, command in every_command(get_command(app))
            if not isinstance(command, TyperGroup)}


def kind(param) -> type | None:
    """The Python type an option takes (int, float, Path, str), or None for a flag."""
    if getattr(param, "is_flag", False):
        return None
    annotation = param.type_descriptor.annotation
    for arg in (annotation, *typing.get_args(annotation)):
        for inner in (arg, *typing.get_args(arg)):
            if inner in (int, float, Path, str):
                return inner
    raise AssertionError(f"{param.name}: no hostile values for {annotation}")


def argv(command, values: dict[str, str]) -> list[str]:
    """Arguments in the order the command declares them, options by their first name."""
    args = []
    for param in command.params:
        if param.name not in values:
            continue
        if param.param_type_name == "argument":
            args.append(values[param.name])
        else:
            args += [param.opts[0], values[param.name]]
    return args


def error_lines(output: str) -> list[str]:
    """The ``error:`` lines, and the message lines of a usage error's box."""
    lines, boxed = [], False
    for line in output.splitlines():
        if line.startswith("╭─ Error"):
            boxed = True
        elif line.startswith("╰"):
            boxed = False
        elif boxed or line.startswith("error:"):
            lines.append(line)
    return lines


@pytest.fixture(scope="module")
def places(tmp_path_factory, house_home) -> Places:
    from homeloop.pipeline import stages
    from homeloop.pipeline.sources.synthetic import generate

    root = tmp_path_factory.mktemp("hostile")
    (root / "cwd" / "here").mkdir(parents=True)
    folder, file = root / "empty", root / "a-file"
    folder.mkdir()
    file.write_text("not a folder")
    csv = root / "one.csv"
    generate(csv, plans=1, sites=1, seed=0)
    stages.run_ingest(csv, root / "ingested")
    plan = pd.read_parquet(root / "ingested" / "plans.parquet")["plan"].iloc[0]
    build = root / "build"
    build.mkdir()
    pd.DataFrame({"home": ["h"], "robot": ["r"], "task": ["handle_smoke_alarm"], "family": ["hazards"],
                  "extension": [False], "applicable": [True], "reasons": [""]}).to_parquet(build / "applicability.parquet")
    (root / "house").mkdir()
    house_home.write(root / "house" / "home.json")
    return Places(root / "cwd" / "here", folder, file, file / "x", csv, str(plan), root / "ingested", build,
                  root / "house")


def cases(p: Places):
    for path, command in commands().items():
        base = BASES[path](p)
        for param in command.params:
            what = kind(param)
            if what is None:
                continue
            values = hostile_paths(p) if what is Path else NUMBERS.get(what, TEXT)
            given = {**base, **COMPANIONS.get((path, param.name), {})}
            for value in values:
                yield path, param.name, [*path, *argv(command, {**given, param.name: value})]


def test_every_command_has_a_base():
    """A new command needs arguments in BASES that stop it before real work."""
    assert sorted(commands()) == sorted(BASES)


def test_every_option_given_hostile_values_ends_with_one_line_or_a_result(places, monkeypatch):
    monkeypatch.chdir(places.cwd)
    runner, bad = CliRunner(), []
    env = {"COLUMNS": "200", "NO_COLOR": "1"}
    for path, name, args in cases(places):
        result = runner.invoke(app, args, env=env)
        lines = error_lines(result.output)
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        if crashed or result.exit_code not in (0, 2) or "Traceback" in result.output \
                or len(lines) != (result.exit_code == 2):
            bad.append(f"{' '.join(path)} {name}: {args!r} -> exit {result.exit_code}, "
                       f"{result.exception!r}, {len(lines)} error lines: {result.output[-400:]!r}")
    assert not bad, f"{len(bad)} cases:\n" + "\n".join(bad)
