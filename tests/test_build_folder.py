"""A build owns its folder (docs/pipeline.md, "The build folder"): it refuses a folder that is
neither empty nor a build, deletes only what it wrote, lists only what it wrote, and `homeloop
verify` names every other file. Bad sources stop with one line before Prefect starts, and a build
that makes fewer homes than asked for says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from build_fixtures import BIN, run_cli, subprocess_env
from homeloop.cli import app

#: Small builds: the first at seed 0, then the same folder at seed 1 with more homes than the plans give.
FIRST = {"plans": 40, "sites": 10, "homes": 3, "seed": 0, "verify_homes": 1}
SECOND = {**FIRST, "seed": 1, "homes": 1000}
#: What a user keeps in a build folder: a folder of their own under homes/, a file of their own in a
#: stage's folder, and a hidden file shaped like the temporary file of an atomic write.
USER_FILES = {"homes/mine/home.json": b'{"mine": true}\n', "audit/my-figure.png": b"my picture",
              ".draft.txt.abcdefgh.tmp": b"half of my draft"}


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def build_args(out: Path, params: dict) -> list[str]:
    args = ["build", "--out", str(out), "--workers", "1"]
    for name, value in params.items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    return args


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


# --- a folder that is no build --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["files", "foreign manifest"])
def test_a_folder_that_is_no_build_is_refused_and_left_untouched(tmp_path, kind):
    folder = tmp_path / "my-project"
    files = dict(USER_FILES)
    if kind == "foreign manifest":  # a manifest.json, but not a build's
        files["manifest.json"] = json.dumps({"name": "my-web-app", "version": "1.0"}).encode()
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    folders = sorted(p for p in folder.rglob("*") if p.is_dir())

    result = invoke(*build_args(folder, FIRST))

    assert result.exit_code == 2, result.output[-3000:]
    (line,) = error_lines(result.output)
    assert line.startswith(f"error: --out {folder} is neither empty nor a HomeLoop build (it holds ")
    shown = sorted(p.name for p in folder.iterdir())[:3]
    assert all(name in line for name in shown), line
    assert snapshot(folder) == files  # every file still there, the same bytes, and nothing added
    assert sorted(p for p in folder.rglob("*") if p.is_dir()) == folders


# --- bad sources: one line before Prefect starts ------------------------------------------------------


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """Each bad source, with the phrase its line must hold."""
    from homeloop.pipeline.sources.swiss_dwellings import V3_COLUMNS

    folder = tmp_path_factory.mktemp("sources")
    (folder / "a-folder.csv").mkdir()
    (folder / "no-geometry.csv").write_text(",".join(c for c in V3_COLUMNS if c != "geometry") + "\n1,2\n")
    (folder / "header-only.csv").write_text(",".join(V3_COLUMNS) + "\n\n")
    return {
        "missing": (folder / "missing.csv", "does not exist"),
        "folder": (folder / "a-folder.csv", "is a folder"),
        "missing column": (folder / "no-geometry.csv", "missing column(s) geometry"),
        "header only": (folder / "header-only.csv", "0 rows read, only a header"),
    }


@pytest.mark.parametrize("case", ["missing", "folder", "missing column", "header only"])
def test_a_bad_source_stops_the_build_with_one_line_before_prefect_starts(sources, case, tmp_path,
                                                                          tmp_path_factory):
    source, phrase = sources[case]
    out = tmp_path / "out"
    result = run_cli([str(BIN / "homeloop"), "build", "--source", str(source), "--out", str(out), "--homes", "3"],
                     env=subprocess_env(tmp_path_factory), timeout=120)
    assert result.returncode == 2, result.stdout[-3000:]
    (line,) = error_lines(result.stdout)  # no Prefect log line, no "NoneType: None"
    assert line.startswith("error: ") and str(source) in line and phrase in line, line
    assert "Flow run" not in result.stdout and "Task run" not in result.stdout
    assert not out.exists()  # stopped before the build folder was made


# --- one folder, two seeds ----------------------------------------------------------------------------


def audit_plans(out: Path) -> set[str]:
    """The plans the audit pictures in ``out`` draw (``audit/<rule>--<plan>.png``)."""
    return {p.stem.split("--", 1)[1] for p in (out / "audit").glob("*--*.png")}


@pytest.fixture(scope="module")
def reseeded(tmp_path_factory):
    """A build at seed 0; the user's files put into its folder, and a temporary file a killed write
    of the build left; the same folder built again at seed 1, asking for more homes than it has."""
    from homeloop.core.io import owner_token
    from homeloop.pipeline.stages import BuildConfig, run_build

    out = tmp_path_factory.mktemp("reseeded") / "build"
    run_build(BuildConfig(**FIRST, out=out, workers=1, progress=False), log=lambda line: None)
    first_plans = audit_plans(out)
    for rel, data in USER_FILES.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    leftover = out / f".audit.html.{owner_token(out)}.a1b2c3d4.tmp"
    leftover.write_bytes(b"half a page")
    said: list[str] = []
    manifest = run_build(BuildConfig(**SECOND, out=out, workers=1, progress=False), log=said.append)
    return out, manifest, said, first_plans, leftover


@pytest.mark.slow
def test_a_rerun_deletes_none_of_the_users_files(reseeded):
    out, manifest, _, _, leftover = reseeded
    assert {rel: (out / rel).read_bytes() for rel in USER_FILES if (out / rel).is_file()} == USER_FILES
    assert not set(USER_FILES) & set(manifest["outputs"])  # and lists none of them as its own
    assert not leftover.exists()  # its own leftover, named with the folder's token, is gone
    homes = pd.read_parquet(out / "homes.parquet")
    folders = {p.name for p in (out / "homes").iterdir() if p.is_dir() and not p.name.startswith(".")}
    assert folders == {"house", "mine", *homes.loc[homes["kept"], "plan"]}


@pytest.mark.slow
def test_another_seed_leaves_no_audit_picture_of_the_old_one(reseeded):
    out, _, _, first_plans, _ = reseeded
    audited = set(pd.read_parquet(out / "audit.parquet")["plan"])
    assert first_plans and not first_plans & audited  # seed 0 drew pictures, of plans seed 1 does not have
    assert audit_plans(out) and audit_plans(out) <= audited


@pytest.mark.slow
def test_verify_names_every_file_no_stage_wrote_and_passes_once_they_are_gone(reseeded, tmp_path):
    out, _, _, _, _ = reseeded
    copy = tmp_path / "build"
    shutil.copytree(out, copy)

    result = invoke("verify", copy)
    assert result.exit_code == 1, result.output[-3000:]
    problems = [line for line in result.output.splitlines() if line and not line.startswith(f"{copy}:")]
    assert problems == [f"extra: {rel} (not in manifest.json)" for rel in sorted(USER_FILES)]

    for rel in USER_FILES:
        (copy / rel).unlink()
    result = invoke("verify", copy)
    assert result.exit_code == 0, result.output[-3000:]


# --- fewer homes than asked for --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_build_short_of_homes_says_so_and_records_it(reseeded):
    out, manifest, said, _, _ = reseeded
    homes = pd.read_parquet(out / "homes.parquet")
    made = int(homes["kept"].sum())
    # Every plan of the selection was tried, and gave fewer homes than asked for.
    assert len(homes) == len(pd.read_parquet(out / "selection.parquet")) and made < SECOND["homes"]
    assert manifest["homes"] == {"asked": SECOND["homes"], "made": made}
    warnings = [line for line in said if line.startswith("warning:")]
    assert warnings == manifest["warnings"]
    (line,) = warnings
    assert line.startswith(f"warning: made {made:,} of the {SECOND['homes']:,} homes asked for (--homes)")
    assert json.loads((out / "manifest.json").read_text())["homes"] == manifest["homes"]


def test_the_build_command_ends_with_the_manifests_warnings(monkeypatch, tmp_path):
    from homeloop.flows import command

    line = "warning: made 31 of the 100,000 homes asked for (--homes): every one of the selection's 40 plans was tried"
    manifest = {"build": "b", "out": str(tmp_path), "counts": {}, "outputs": {}, "warnings": [line]}
    monkeypatch.setattr(command, "build_command", lambda **kwargs: manifest)
    result = invoke(*build_args(tmp_path / "out", {**FIRST, "homes": 100000}))
    assert result.exit_code == 0, result.output[-3000:]
    assert error_lines(result.output)[-1] == line
